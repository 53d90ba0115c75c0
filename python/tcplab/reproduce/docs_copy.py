"""``tcplab reproduce --docs``: a written report copied into the docs (docs/RESULTS.md,
.html and docs/results/), replacing only what tcplab wrote there before."""

from __future__ import annotations

import shutil
from pathlib import Path

from tcplab.errors import SpecError
from tcplab.reproduce.report_text import ENTRIES

# Lists what tcplab put in docs/results/, so that a later --docs replaces those files
# and nothing else (a user's files there were deleted with the directory).
RESULTS_MARKER = ".tcplab-results.json"


def check_docs_results(docs: Path) -> None:
    """Refuse ``docs/results`` unless everything in it is what tcplab wrote there (listed
    in its marker); an absent or empty directory is fine. Called before any run.

    Raises
    ------
    SpecError
        Naming ``--docs`` and the files that are not tcplab's.
    """
    import json

    target = Path(docs) / "results"
    if Path(docs).exists() and not Path(docs).is_dir():
        raise SpecError([("--docs", f"{docs} is a file, not a directory")])
    if not target.exists():
        return
    if not target.is_dir():
        raise SpecError([("--docs", f"{target} is a file, not a directory")])
    try:
        listed = set(json.loads((target / RESULTS_MARKER).read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        listed = set()
    extra = sorted(
        p.relative_to(target).as_posix()
        for p in target.rglob("*")
        if p.name != RESULTS_MARKER and p.relative_to(target).as_posix() not in listed
    )
    if extra:
        shown = ", ".join(extra[:10]) + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
        raise SpecError(
            [
                (
                    "--docs",
                    f"{target} holds files tcplab did not write ({shown}); "
                    "move them away or choose another directory",
                )
            ]
        )


def copy_report(src: Path, docs: Path, name: str = "RESULTS") -> None:
    """Put a written report into the docs: ``docs/RESULTS.md``, ``.html`` and ``docs/results/``.
    ``docs/results/`` is replaced whole, and only when it holds nothing but what tcplab
    wrote there (check_docs_results); the new one is assembled beside it first."""
    import json
    import os
    import tempfile

    docs = Path(docs)
    check_docs_results(docs)
    docs.mkdir(parents=True, exist_ok=True)
    target = docs / "results"
    staged = Path(tempfile.mkdtemp(prefix=".tmp-results-", dir=docs))
    try:
        shutil.copytree(Path(src) / "plots", staged / "results")
        files = sorted(
            p.relative_to(staged / "results").as_posix()
            for p in (staged / "results").rglob("*")
            if p.is_file()
        )
        (staged / "results" / RESULTS_MARKER).write_text(
            json.dumps({"written_by": "tcplab reproduce --docs", "files": files}, indent=1) + "\n"
        )
        if target.exists():
            os.rename(target, staged / "old")
        os.rename(staged / "results", target)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    for ext in ("md", "html"):
        text = (Path(src) / f"report.{ext}").read_text().replace("plots/", "results/")
        # The docs link to the repository's entries, not to the report's copies.
        for before in ("](", 'href="'):
            text = text.replace(f"{before}{ENTRIES}/", f"{before}../experiments/papers/")
        (docs / f"{name}.{ext}").write_text(text)
