"""How long drawing a run's report takes, apart from simulating it (< 0.5 s for a
600 s run). Not a test: a measurement whose figures go into benches/RESULTS.md.

    python benches/report_speed.py [--duration 600s] [--repeat 5] [--profile FILE]

Runs experiments/quickstart.toml (2 BBR + 1 CUBIC flows, 100 ms samples) for the given
duration once, then ``--repeat`` times, into a temporary directory, times each step and
prints the medians: drawing the figure (``draw_report``), writing report.png, report.pdf
and report.html from it, the default ``save_report`` (draw + PNG + HTML: what ``tcplab
run`` writes) and ``save_report`` with the PDF (``--pdf``). Each figure is given as wall
time and as this process's CPU time (``time.process_time``): on a shared machine the CPU
time is the one other processes do not inflate. ``--profile FILE`` also writes a cProfile
of one default ``save_report`` (read it with ``python -m pstats FILE``).

Code before the PDF became optional (one ``write_images`` writing PNG and PDF, and a
``save_report`` without ``pdf``) is timed too, so the same script measures both sides:
there the PNG and PDF steps are timed with the same ``savefig`` arguments its
``write_images`` used, and the default save is the one that writes all three files.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from tcplab.api import run
from tcplab.report import run_report

ROOT = Path(__file__).resolve().parents[1]
PDF_ON_REQUEST = hasattr(run_report, "write_pdf")


def _png(fig: Any, d: Path) -> None:
    if PDF_ON_REQUEST:
        run_report.write_png(fig, d)
    else:  # the PNG half of the old write_images
        fig.savefig(
            d / "report.png",
            dpi=90,
            metadata={"Software": None},
            pil_kwargs={"compress_level": 1},
        )


def _pdf(fig: Any, d: Path) -> None:
    if PDF_ON_REQUEST:
        run_report.write_pdf(fig, d)
    else:  # the PDF half of the old write_images
        fig.savefig(
            d / "report.pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None}
        )


def cold(result: Any) -> None:
    """Forget the pivoted series RunData.wide keeps (absent in code before it had one):
    unset, its series owner makes the next wide() start afresh."""
    if hasattr(result.run, "_wide_of"):
        result.run._wide_of = None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="600s")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", help="write a cProfile of one default save_report here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = run(
        ROOT / "experiments" / "quickstart.toml",
        overrides={"experiment.duration": args.duration},
        report=False,
    )
    sim = time.perf_counter() - t0
    print(f"simulation {sim:.3f} s, {len(result.series)} series rows")
    names = ["draw", "png", "pdf", "html", "save_report (default)", "save_report --pdf"]
    steps: dict[str, list[tuple[float, float]]] = {n: [] for n in names}

    def timed(name: str, fn: Any, *fn_args: Any, **fn_kwargs: Any) -> Any:
        # Earlier steps' garbage (closed figures) collected first, untimed, so that no step
        # pays a full collection of another's objects.
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        out = fn(*fn_args, **fn_kwargs)
        steps[name].append((time.perf_counter() - w, time.process_time() - c))
        return out

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for _ in range(args.repeat):
            # Each repeat starts from a cold RunData.wide cache, as `tcplab
            # report DIR` does (`tcplab run` has the summary's columns cached already).
            cold(result)
            fig = timed("draw", run_report.draw_report, result)
            timed("png", _png, fig, d)
            timed("pdf", _pdf, fig, d)
            plt.close(fig)
            cold(result)
            timed("html", run_report.write_html, result, d)
            cold(result)
            timed("save_report (default)", run_report.save_report, result, d)
            if PDF_ON_REQUEST:
                cold(result)
                timed("save_report --pdf", run_report.save_report, result, d, pdf=True)
        if args.profile:
            cold(result)
            cProfile.runctx("run_report.save_report(result, d)", globals(), locals(), args.profile)
    med = statistics.median
    print(f"median of {args.repeat} (wall / CPU seconds):")
    for name, xs in steps.items():
        if xs:
            print(f"  {name:<22} {med(w for w, _ in xs):.3f} / {med(c for _, c in xs):.3f}")
    if not PDF_ON_REQUEST:
        print("  (this code's default save_report writes the PDF too)")


if __name__ == "__main__":
    main()
