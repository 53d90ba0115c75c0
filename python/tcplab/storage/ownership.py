"""What tcplab may replace or reuse. One rule for every writer: tcplab replaces only files
it wrote, proven by the sha256 its manifest recorded for each (not by their names), and
refuses anything else, naming what is in the way.

- A run directory (manifest.json) is replaced whole only when every file in it is listed
  in its manifest with the digest it still has (:func:`check_replaceable`): a user's file
  beside the run, or a spec.toml edited inside it, is refused, never deleted.
- Files written into a directory that may hold the user's own (a run's redrawn report,
  a comparison, a catalogue report, a sweep's table and plots) go through
  :func:`write_owned`: each target that exists must be one this directory's manifest
  lists with its present digest; the manifest then records the new digests.

The same manifest also tells whether a stored run can be trusted: a sweep reuses a run
only when every file still has the digest the manifest recorded.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError
from tcplab.specs.files import read_bounded
from tcplab.storage.files import (
    MANIFEST,
    check_output_dir,
    clean_stale_tmp,
    sha256_file,
    tmp_prefix,
)
from tcplab.version import __version__

MAX_MANIFEST_BYTES = 16 * 2**20
"""A manifest lists a few files per run (a catalogue report's some hundred plots); one
larger than this is not ours, and is never read whole (a link to /dev/zero)."""

# Temporaries of ours (storage/files.py tmp_prefix) may be left by a killed process.
_OUR_TMP = re.compile(r"^\.tmp-.*-p\d+-[A-Za-z0-9_]+$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

OUTPUTS = "outputs.json"
"""The manifest of a directory that is not a run but holds files tcplab wrote among
possibly the user's own: a comparison (``compare -o``), a catalogue report
(``reproduce -o``), a sweep's table and plots. Run directories keep manifest.json."""


def read_manifest(d: Path, name: str = MANIFEST) -> dict[str, Any] | None:
    """``d``'s manifest (``name``) if it is one tcplab wrote (a ``tcplab_version`` and a
    ``sha256`` table of relative file names to 64 hex digits), else None (absent,
    unreadable, too large or foreign: any other string as a digest makes it foreign)."""
    try:
        doc = json.loads(read_bounded(Path(d) / name, MAX_MANIFEST_BYTES))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or "tcplab_version" not in doc:
        return None
    digests = doc.get("sha256")
    if not isinstance(digests, dict) or not all(
        isinstance(k, str) and _safe_name(k) and isinstance(v, str) and _SHA256.match(v)
        for k, v in digests.items()
    ):
        return None
    return doc


def _safe_name(name: str) -> bool:
    """A relative path inside the directory (no absolute path, no ``..``)."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and ".." not in parts and "" not in parts


def not_ours(d: Path, names: list[str], digests: dict[str, str]) -> list[str]:
    """Of ``names`` (relative paths tcplab is about to write in ``d``), those in the way:
    present, but not a regular file ``digests`` lists with the sha256 it has now (the
    user's own file of that name, or ours edited since)."""
    out = []
    for name in names:
        p = Path(d) / name
        if not (p.exists() or p.is_symlink()):
            continue
        if p.is_symlink() or not p.is_file() or digests.get(name) != sha256_file(p):
            out.append(name)
    return out


def _shown(names: list[str]) -> str:
    return ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def check_may_write(d: Path, names: list[str], flag: str, manifest: str = OUTPUTS) -> None:
    """Refuse, naming ``flag`` and the files, when any of ``names`` in ``d`` is in the
    way (:func:`not_ours` against ``d``'s ``manifest``); callers that run for long check
    before they start, and :func:`write_owned` checks again before it moves anything."""
    doc = read_manifest(d, manifest) if Path(d).is_dir() else None
    blocked = not_ours(Path(d), names, doc["sha256"] if doc else {})
    if blocked:
        raise SpecError(
            [
                (
                    flag,
                    f"{d} holds files tcplab did not write, or that changed since it wrote "
                    f"them ({_shown(blocked)}); move them away or choose another directory",
                )
            ]
        )


def write_owned(
    d: Path,
    write: Callable[[Path], list[str]],
    flag: str,
    manifest: str = OUTPUTS,
    kind: str = "outputs",
    remove_stale: bool = False,
) -> list[str]:
    """Write files into directory ``d`` (made if missing) under the one rule:
    ``write(tmp)`` writes them into a temporary directory beside them and returns their
    relative names; each is then moved into place, but only if nothing is in the way
    (:func:`not_ours` against ``d``'s ``manifest``), else a SpecError naming ``flag``
    and the files refuses before any is moved. The manifest (created as ``kind`` if
    missing) records their digests. With ``remove_stale``, files the manifest listed but
    this write did not produce are removed, if still as tcplab wrote them (a comparison
    of sweeps after one of runs leaves no old compare.png). Returns the names written.
    """
    d = Path(d)
    check_output_dir(d, flag)
    if d.exists() and not os.access(d, os.W_OK | os.X_OK):
        raise SpecError([(flag, f"{d} is not writable")])
    d.mkdir(parents=True, exist_ok=True)
    if (d / manifest).exists() and read_manifest(d, manifest) is None:
        raise SpecError([(flag, f"{d / manifest} is not a manifest tcplab wrote; move it away")])
    clean_stale_tmp(d)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(kind), dir=d))
    except OSError as err:
        if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise SpecError([(flag, f"{d} is not writable ({err.strerror})")]) from None
        raise
    try:
        names = write(tmp)
        check_may_write(d, names, flag, manifest)
        doc = read_manifest(d, manifest) or {"tcplab_version": __version__, "kind": kind}
        digests: dict[str, str] = dict(doc.get("sha256", {}))
        stale = sorted(set(digests) - set(names)) if remove_stale else []
        for name in stale:
            if not not_ours(d, [name], digests):
                (d / name).unlink(missing_ok=True)
            digests.pop(name)
        for name in names:
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / name, d / name)
            digests[name] = sha256_file(d / name)
        doc["tcplab_version"] = doc.get("tcplab_version", __version__)
        doc["sha256"] = dict(sorted(digests.items()))
        staged = d / (tmp_prefix(manifest) + "x")
        staged.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(staged, d / manifest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return names


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
    here = Path.cwd().resolve()
    if here == out.resolve() or out.resolve() in here.parents:
        # Replacing it whole would move the shell's own directory away (a run from
        # inside its run directory ended in a traceback after the simulation).
        raise SpecError(
            [
                (
                    flag,
                    f"{out} is the current directory or holds it; a run directory is "
                    "replaced whole, so name it from outside (e.g. cd .. first)",
                )
            ]
        )
    doc = read_manifest(out)
    if doc is None:
        raise SpecError([(flag, f"{out} exists and is not a tcplab run directory; choose another")])
    # Every listed file present with its recorded digest (not_ours passes an absent one).
    changed = [
        n
        for n, digest in doc["sha256"].items()
        if not (out / n).exists() or not_ours(out, [n], {n: digest})
    ]
    if changed:
        raise SpecError(
            [
                (
                    flag,
                    f"{out} holds files that changed since tcplab wrote them or are missing "
                    f"({_shown(changed)}); move the directory away or choose another",
                )
            ]
        )
    extra = foreign_entries(out)
    if extra:
        raise SpecError(
            [
                (
                    flag,
                    f"{out} holds files tcplab did not write ({_shown(extra)}); "
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
