"""Small pieces of the report's text shared by its Markdown and HTML forms: table cells
and numbers, links to the report's copies of the entries, the header's scope and timing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tcplab.specs.units import parse_time


def _seconds(text: Any) -> float:
    try:
        return parse_time(str(text)) / 1e9
    except (ValueError, TypeError):
        return 0.0


def _repo_path(path: Path) -> str:
    """An entry's path as the repository spells it (experiments/papers/...)."""
    parts = Path(path).as_posix().split("/")
    if "papers" in parts:
        return "experiments/" + "/".join(parts[parts.index("papers") :])
    return Path(path).as_posix()


ENTRIES = "catalogue"
"""The folder of a written report that holds a copy of each entry's TOML, which the
report's links point to, so they work wherever the report is (they pointed
at ../experiments/..., dead outside a checkout). docs/RESULTS.md points at the
repository's own files instead (copy_report)."""


def _entry_copy(path: Path) -> str:
    """Where a report keeps its copy of an entry's TOML: catalogue/<paper>/<name>.toml."""
    parts = Path(path).as_posix().split("/")
    rest = parts[parts.index("papers") + 1 :] if "papers" in parts else parts[-1:]
    return f"{ENTRIES}/" + "/".join(rest)


def _link(path: Path, claim: Any = None) -> str:
    """A link from the report to its copy of an entry's TOML, at the claim's line if
    given."""
    target = _entry_copy(path)
    if claim is None:
        return target
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return target
    head = claim.quote[:40]
    # the claim's own `quote = ` line first: a header comment may quote the same sentence
    for own in (True, False):
        for n, line in enumerate(lines, 1):
            if head and head in line and (not own or line.startswith("quote = ")):
                return f"{target}#L{n}"
    return target


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else (f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _scope(header: dict[str, Any]) -> str:
    """ "full catalogue" only for the whole catalogue; a selection says it is one."""
    kind = "quick" if header["quick"] else "full"
    if header.get("selection"):
        return f"{kind} runs of a selection ({', '.join(header['selection'])})"
    return f"{kind} catalogue"


def _timing(header: dict[str, Any]) -> str:
    """The invocation's wall time, and how much of the work it did itself: a report drawn
    from cached runs took far less than running them (the first run's time is the one that
    says how long the catalogue takes)."""
    cached = header.get("cached", 0)
    done = (
        f"all {header['runs']} computed in it"
        if not cached
        else (
            f"{header['runs'] - cached} computed in it, {cached} reused from the cache of an earlier invocation"
        )
    )
    repaired = header.get("repaired", 0)
    if repaired:
        done += (
            f"; {repaired} of those computed were stored runs found damaged (a file differing "
            "from its manifest's digest) and computed again"
        )
    controls = header.get("control_runs", 0)
    if controls:
        reused = header.get("control_cached", 0)
        done += f"; plus {controls} runs of the claims' controls, {controls - reused} computed"
    return f"wall time {header['wall_s']:.0f} s on {header['workers']} workers ({done})"
