"""How long drawing a run's report takes, apart from simulating it (issue 19: < 0.5 s for a
600 s run). Not a test: a measurement whose figures go into benches/RESULTS.md.

    python benches/report_speed.py [--duration 600s] [--repeat 5]

Runs experiments/quickstart.toml (2 BBR + 1 CUBIC flows, 100 ms samples) for the given
duration once, then draws and writes the report ``--repeat`` times into a temporary
directory and prints the median wall time of each step: drawing the figure, writing
report.html, and the whole of ``save_report`` (every report file).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

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
    draw, html, whole = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fig = run_report.draw_report(result)
            t1 = time.perf_counter()
            plt.close(fig)
            t2 = time.perf_counter()
            if hasattr(run_report, "write_html"):  # absent before issue 19's HTML report
                run_report.write_html(result, Path(d))
            t3 = time.perf_counter()
            run_report.save_report(result, Path(d))
            t4 = time.perf_counter()
            draw.append(t1 - t0)
            html.append(t3 - t2)
            whole.append(t4 - t3)
    med = statistics.median
    print(
        f"median of {args.repeat}: draw the figure {med(draw):.3f} s, "
        f"html {med(html):.3f} s; save_report (all files) {med(whole):.3f} s"
    )


if __name__ == "__main__":
    main()
