"""How long drawing a run's report takes, apart from simulating it (issue 19: < 0.5 s for a
600 s run). Not a test: a measurement whose figures go into benches/RESULTS.md.

    python benches/report_speed.py [--duration 600s] [--repeat 5]

Runs experiments/quickstart.toml (2 BBR + 1 CUBIC flows, 100 ms samples) for the given
duration once, then draws and writes the report ``--repeat`` times into a temporary
directory and prints the median wall time of each step: drawing the figure, writing
report.html, and the whole of ``save_report`` (every report file). Each figure is given
as wall time and as this process's CPU time (``time.process_time``): on a shared machine
the CPU time is the one other processes do not inflate.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from tcplab.api import run
from tcplab.report import run_report

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="600s")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = run(
        ROOT / "experiments" / "quickstart.toml",
        overrides={"experiment.duration": args.duration},
        report=False,
    )
    sim = time.perf_counter() - t0
    print(f"simulation {sim:.3f} s, {len(result.series)} series rows")
    steps: dict[str, list[tuple[float, float]]] = {"draw": [], "html": [], "save_report": []}

    def timed(name: str, fn: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        steps[name].append((time.perf_counter() - w, time.process_time() - c))
        return out

    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.repeat):
            plt.close(timed("draw", lambda: run_report.draw_report(result)))
            if hasattr(run_report, "write_html"):  # absent before issue 19's HTML report
                timed("html", lambda: run_report.write_html(result, Path(d)))
            timed("save_report", lambda: run_report.save_report(result, Path(d)))
    med = statistics.median
    print(f"median of {args.repeat} (wall / CPU seconds):")
    for name, xs in steps.items():
        if xs:
            print(f"  {name:<12} {med(w for w, _ in xs):.3f} / {med(c for _, c in xs):.3f}")


if __name__ == "__main__":
    main()
