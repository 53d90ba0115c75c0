"""How the resolved specs of stored runs differ, field by field (``tcplab compare`` prints
this first: a difference in the numbers means little until one knows what else differed).

The resolved spec (``spec.toml`` of a run directory: defaults filled, sizes in packets) is
flattened into paths as ``--set`` and ``[sweep]`` spell them (``bottleneck.buffer``,
``flows[1].cc``, ``flows[0].params.beta``); a list of tables is indexed, a list of plain
values (a trace's rates) is one value. A field present in only some runs shows ``-`` (absent)
for the others. Equal specs give no rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tcplab.specs.load import read_toml

ABSENT = "-"


def flatten(doc: Any, prefix: str = "") -> dict[str, Any]:
    """``{path: value}`` for every leaf of a spec document."""
    out: dict[str, Any] = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        for i, v in enumerate(doc):
            out.update(flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = doc
    return out


def _shown(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def diff_docs(
    docs: Sequence[dict[str, Any]], ignore: Iterable[str] = ()
) -> list[tuple[str, list[str]]]:
    """``[(path, [value in each doc])]`` for every path whose values are not all equal, in
    the order the paths first appear; paths in ``ignore`` (and below them) are skipped."""
    flat = [flatten(d) for d in docs]
    skip = tuple(ignore)
    paths: dict[str, None] = {}
    for f in flat:
        paths.update(dict.fromkeys(f))
    rows = []
    for path in paths:
        if any(path == s or path.startswith((s + ".", s + "[")) for s in skip):
            continue
        values = [f.get(path, ABSENT) for f in flat]
        if any(v != values[0] for v in values[1:]):
            rows.append((path, [ABSENT if v is ABSENT else _shown(v) for v in values]))
    return rows


def read_resolved(run_dir: Path) -> dict[str, Any]:
    """A stored run's resolved spec as a plain document (its ``spec.toml``)."""
    return read_toml(Path(run_dir) / "spec.toml")
