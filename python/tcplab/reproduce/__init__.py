"""The reproduction catalogue: the five source papers' measured figures and tables as
specs with their claims (``experiments/papers/``), run through the sweep machinery and
judged claim by claim (``tcplab reproduce``)."""

from __future__ import annotations

import datetime
import time
from pathlib import Path

from tcplab.reproduce.catalogue import PAPERS, Entry, load_catalogue
from tcplab.reproduce.report import (
    REPORT_FILES,
    TALLY_COLUMNS,
    check_docs_results,
    copy_report,
    counts,
    draw_plots,
    write_report,
)
from tcplab.reproduce.runner import VERDICTS, EntryResult, run_catalogue
from tcplab.storage.directory import git_commit
from tcplab.storage.ownership import check_may_write
from tcplab.version import __version__

__all__ = ["PAPERS", "VERDICTS", "Entry", "load_catalogue", "reproduce"]


def reproduce(
    select: list[str] | None,
    out: Path,
    *,
    quick: bool = False,
    workers: int | None = None,
    executor: str = "local",
    root: Path | None = None,
    docs: Path | None = None,
    command: str = "tcplab reproduce",
    say=print,
    progress: bool = False,
) -> list:
    """Run the selected catalogue entries into ``out`` and write the report; return the
    entries' results. ``docs``: also copy the report there as RESULTS.md/.html;
    ``progress``: a progress bar over each entry's runs (on stderr)."""
    if docs is not None:
        check_docs_results(Path(docs))  # refuse before hours of runs, not after
    check_may_write(Path(out), list(REPORT_FILES), "-o")  # likewise the report's own files
    entries = load_catalogue(root, select)
    t0 = time.monotonic()
    results = run_catalogue(
        entries, Path(out), quick, workers, executor, say, progress, after=_draw
    )
    import os

    header = {
        "command": command,
        "version": __version__,
        "quick": quick,
        "selection": list(select or []),
        "entries": len(entries),
        "runs": sum(len(r.runs) for r in results),
        "cached": sum(r.cached for r in results),
        "repaired": sum(r.repaired for r in results),
        "control_runs": sum(r.control_runs for r in results),
        "control_cached": sum(r.control_cached for r in results),
        "wall_s": time.monotonic() - t0,
        "workers": workers or os.cpu_count() or 1,
        "commit": git_commit(),
        "date": datetime.date.today().isoformat(),
    }
    write_report(results, Path(out), header)
    if docs is not None:
        copy_report(Path(out), Path(docs))
    for paper, c in counts(results).items():
        say(f"{paper}: " + ", ".join(f"{c.get(v, 0)} {v}" for v in TALLY_COLUMNS))
    return results


def _draw(res: EntryResult) -> None:
    """An entry's plots drawn as soon as it is judged (report.draw_plots), kept for the
    report."""
    res.plots = draw_plots(res)
