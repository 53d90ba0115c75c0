"""What tcplab may replace or reuse: a directory is tcplab's only when its manifest is
ours (it names a tcplab version and a sha256 per file) and every file in it is accounted
for by that manifest. Anything else in it is the user's, and tcplab refuses rather than
deletes it (a `main.py` and a `src/` beside a stray `manifest.json` were lost).

The same manifest also tells whether a stored run can be trusted: a sweep reuses a run
only when every file still has the digest the manifest recorded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError
from tcplab.storage.files import MANIFEST, check_output_dir, sha256_file

# Temporaries of ours (storage/files.py tmp_prefix) may be left by a killed process.
_OUR_TMP = re.compile(r"^\.tmp-.*-p\d+-[A-Za-z0-9_]+$")


def read_manifest(d: Path) -> dict[str, Any] | None:
    """``d``'s manifest if it is one tcplab wrote (a ``tcplab_version`` and a
    ``sha256`` table of file names), else None (absent, unreadable or foreign)."""
    try:
        doc = json.loads((Path(d) / MANIFEST).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or "tcplab_version" not in doc:
        return None
    digests = doc.get("sha256")
    if not isinstance(digests, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in digests.items()
    ):
        return None
    return doc


def _entries(d: Path) -> list[str]:
    """Every entry below ``d`` as a relative path (directories marked with a '/')."""
    out = []
    for p in sorted(Path(d).rglob("*")):
        rel = p.relative_to(d).as_posix()
        out.append(rel + "/" if p.is_dir() and not p.is_symlink() else rel)
    return out


def foreign_entries(d: Path) -> list[str]:
    """The entries of run directory ``d`` its manifest does not account for (all of
    them when it has no manifest of ours). Our own leftover temporaries do not count."""
    doc = read_manifest(d)
    listed = set(doc["sha256"]) | {MANIFEST} if doc else set()
    return [
        e
        for e in _entries(d)
        if e not in listed and not _OUR_TMP.match(e.rstrip("/").split("/")[0])
    ]


def check_replaceable(out: Path, flag: str) -> None:
    """Refuse an output path that holds anything but a run directory tcplab wrote: a
    file, or a directory with entries its manifest does not list (named, at most ten).
    An absent path or an empty directory is fine.

    Raises
    ------
    SpecError
        Naming ``flag``, the path and the files that are not tcplab's.
    """
    out = Path(out)
    check_output_dir(out, flag)
    if not out.exists() or not any(out.iterdir()):
        return
    if read_manifest(out) is None:
        raise SpecError([(flag, f"{out} exists and is not a tcplab run directory; choose another")])
    extra = foreign_entries(out)
    if extra:
        shown = ", ".join(extra[:10]) + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
        raise SpecError(
            [
                (
                    flag,
                    f"{out} holds files tcplab did not write ({shown}); "
                    "move them away or choose another directory",
                )
            ]
        )


def run_problem(d: Path) -> str | None:
    """Why the stored run ``d`` cannot be reused, or None when it can: it must be a
    directory with our manifest, and every file the manifest lists must be there with
    the digest it recorded (an edited summary.json, a truncated series.parquet)."""
    d = Path(d)
    if not d.is_dir():
        return "not a directory" if d.exists() else "missing"
    doc = read_manifest(d)
    if doc is None:
        return f"no readable {MANIFEST}"
    for name, digest in doc["sha256"].items():
        p = d / name
        if not p.is_file():
            return f"{name} is missing"
        if sha256_file(p) != digest:
            return f"{name} differs from the digest in {MANIFEST}"
    return None
