"""The files of a stored run or sweep, below any format: the manifest's name, file digests,
temporaries named by their process (so a later run removes a dead one's leftovers), output
paths checked before any work, and a directory that appears whole or not at all
(:func:`atomic_dir`). storage/ownership.py and storage/directory.py build on these.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError, disk_full
from tcplab.specs.files import read_bounded

MANIFEST = "manifest.json"
MAX_STORED_JSON_BYTES = 256 * 2**20
"""The largest summary.json, manifest or sweep.json read back: a 10 000-flow run's
summary is a few MB; a file larger than this is not one tcplab wrote, and a link to
/dev/zero or a FIFO in its place is refused instead of read without end."""
TMP_PREFIX = ".tmp-"


def read_json(path: Path, limit: int = MAX_STORED_JSON_BYTES) -> Any:
    """A stored JSON file, read through the bounded reader (only a regular file of at
    most ``limit`` bytes); ValueError for anything else, with what it is."""
    return json.loads(read_bounded(path, limit))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tmp_prefix(name: str) -> str:
    """The prefix of this process's temporaries for ``name``: ``.tmp-<name>-p<pid>-``. The
    pid lets a later run tell a dead process's leftovers from a live one's work."""
    return f"{TMP_PREFIX}{name}-p{os.getpid()}-"


_OURS = re.compile(re.escape(TMP_PREFIX) + r".*-p(\d+)-[A-Za-z0-9_]+$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_stale_tmp(parent: Path) -> list[Path]:
    """Remove the temporaries of tcplab processes that no longer run (killed with
    SIGKILL, or by a crash of the machine) from ``parent``; return what was removed.
    A live process's temporaries are left alone (a concurrent run's work)."""
    removed = []
    try:
        entries = list(Path(parent).iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _OURS.match(p.name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def check_output_dir(out: Path, flag: str = "-o") -> None:
    """Refuse, before any work, an output path that cannot be written: a file on the way
    to it, or a nearest existing ancestor that is not a writable directory.

    Raises
    ------
    SpecError
        Naming ``flag`` and the path.
    """
    out = Path(out)
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe != out and not probe.is_dir():
        raise SpecError([(flag, f"{out}: {probe} is a file, not a directory")])
    if out.exists() and not out.is_dir():
        raise SpecError([(flag, f"{out} is a file, not a directory")])
    writable_dir = out.parent if out.exists() else probe
    if not os.access(writable_dir, os.W_OK | os.X_OK):
        raise SpecError([(flag, f"{out}: {writable_dir} is not writable")])


@contextmanager
def atomic_dir(
    final: Path, replace: bool = False, may_replace: Callable[[Path], None] | None = None
) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``final``; on success rename it to
    ``final`` (replacing an existing one if ``replace``), on any error remove it. Dead
    processes' leftovers beside it are removed first. ``may_replace(final)`` is called
    just before an existing ``final`` is replaced and raises to refuse (what is there
    may have changed while the run ran)."""
    final = Path(final).absolute()  # "." has no name to put beside it
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(final.parent)
    tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(final.name), dir=final.parent))
    try:
        yield tmp
        if final.exists():
            if not replace:
                raise FileExistsError(f"{final} exists")
            if may_replace is not None:
                may_replace(final)
            old = Path(tempfile.mkdtemp(prefix=tmp_prefix(final.name + "-old"), dir=final.parent))
            os.rename(final, old / "x")
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if disk_full(err) and not getattr(err, "filename", None):
            # Say where: the writers (pyarrow, matplotlib) often do not.
            raise OSError(errno.ENOSPC, "No space left on device", str(final)) from err
        raise
