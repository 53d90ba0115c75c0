"""Compiling ``bpf:`` sources and caching their objects: clang (``-target bpf -O2 -g``)
against the header tcplab ships (``tcplab/data/bpf/include/tcplab_cc.h``, the kernel
structures a congestion control touches, marked for CO-RE relocation), libbpf's
``bpf_helpers.h`` and a ``vmlinux.h``; a flow's compile options (:class:`Build`).

Objects are cached under ``$TCPLAB_CACHE/bpf`` (default ``~/.cache/tcplab/bpf``) by the
sha256 of their own bytes, so the engine config names ``<sha256>.o`` (and a run's digest,
tcplab.runs.digest, covers the object the run executed); a cached object is checked against that sha256
whenever it is used. An index keyed by the source, the compiler and the flags, holding the
sha256 of every file clang's depfile lists, avoids recompiling while none of them changed.

Nothing here asks the engine: what a compiled object holds (its name, its parameters) is
tcplab.bpf's. tcplab.bpf re-exports the public names, so ``bpf.object_for`` and the like
keep working.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tcplab import bpf_shipped

HEADERS = Path(__file__).resolve().parent / "data" / "bpf" / "include"


CFLAGS = ["-target", "bpf", "-O2", "-g", "-Wall", "-Wno-unused-function"]


MAX_SOURCE_BYTES = 16 * 2**20


CLANG_TIMEOUT_S = 120
"""A compile of one congestion control takes about a second (bbr.bpf.c: 0.6 s here); two
minutes means clang is stuck, not slow."""


class BpfBuildError(ValueError):
    """A program that cannot be used: the message says why (clang's own words for a
    compile error)."""


def cache_dir() -> Path:
    base = os.environ.get("TCPLAB_CACHE") or str(Path.home() / ".cache" / "tcplab")
    return Path(base) / "bpf"


@dataclass(frozen=True)
class Build:
    """How a flow's source is compiled beyond tcplab's defaults (``flows[i].bpf`` in a
    spec): include directories searched before tcplab's and the vmlinux.h one, and ``-D``
    defines. Both are part of the compile-cache key (they are clang flags). ``ops``
    chooses one of several ``tcp_congestion_ops`` in the object (not a compile flag)."""

    include: tuple[str, ...] = ()
    define: tuple[tuple[str, str], ...] = ()
    ops: str | None = None

    def flags(self) -> list[str]:
        out: list[str] = []
        for d in self.include:
            out += ["-I", d]
        for name, value in self.define:
            out.append(f"-D{name}={value}")
        return out


NO_BUILD = Build()


def object_for(source: Path, build: Build = NO_BUILD) -> Path:
    """The cached object of a ``.bpf.c`` (compiled if needed) or of a ``.o``.

    The cache is keyed on every file clang read: the first compile of a source writes a
    depfile (``-MD -MF``) and an index record (keyed by the source's path and bytes, the
    compiler's version and the flags) lists each file it names with its sha256; the
    object is reused only while every listed file still has those bytes, so an edited
    local header recompiles, and a source that no longer compiles after the edit is an
    error, never the old object. A cached object is used only if its bytes have the
    sha256 it is named by (:func:`verified`).

    Raises
    ------
    BpfBuildError
        The file is missing, not a regular file, too large, or does not compile.
    """
    data = _read(source)
    out = cache_dir()
    if source.suffix == ".o":
        return _store(data, out)
    if not build.flags() and compiler_missing():
        shipped = bpf_shipped.object_for(source, data)
        if shipped is not None:  # an unmodified example, compiled when the wheel was
            return _store(shipped, out)
    flags = [*CFLAGS, *build.flags(), "-I", str(HEADERS), "-I", str(vmlinux_dir())]
    key = _digest(
        [str(source.resolve()).encode(), data, _clang_version().encode(), *map(str.encode, flags)]
    )
    index = out / f"src-{key}.json"
    cached = _reusable(index, out)
    if cached is not None:
        return cached
    with tempfile.TemporaryDirectory() as tmp:
        obj, dep = Path(tmp) / "prog.o", Path(tmp) / "prog.d"
        cmd = [_clang(), *flags, "-MD", "-MF", str(dep), "-c", str(source), "-o", str(obj)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=CLANG_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BpfBuildError(
                f"{source}: clang did not finish compiling it within {CLANG_TIMEOUT_S} s "
                "(a macro or include that expands without end?)"
            ) from None
        if r.returncode != 0:
            # The program's own directory only: a spec's include directories are search
            # paths, and may name any directory (clang_messages says why).
            own = [source.resolve().parent]
            shown = clang_messages(r.stderr, own)
            raise BpfBuildError(f"{source} does not compile (clang):\n{shown}")
        deps = {str(p): _file_digest(p) for p in depfile_paths(dep.read_text(), Path.cwd())}
        stored = _store(obj.read_bytes(), out)
    record = {"object": stored.name, "deps": deps}
    tmp_index = index.with_suffix(f".tmp{os.getpid()}")
    tmp_index.write_text(json.dumps(record, sort_keys=True))
    tmp_index.replace(index)
    return stored


_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:][^:]*):\d+:\d+: (?:fatal error|error|warning|note): ")


_INCLUDED_FROM = re.compile(r"^In file included from ")


_SYSTEM_HEADERS = (Path("/usr/include"), Path("/usr/local/include"))


def clang_messages(stderr: str, own: list[Path], limit: int = 3000) -> str:
    """clang's diagnostics for the user: those located in the user's own files (under a
    directory of ``own``) in full; those in tcplab's or libbpf's headers as their
    one-line message; of any other file only where, never its text, which clang would
    otherwise echo line by line (and whose message may quote it).

    Own is what the program is known to be made of: the directory of its source and
    everything below it (object_for passes that one), symbolic links resolved. A spec's
    ``bpf.include`` directories are not own by being named: they are search paths a spec
    may point anywhere (``../outside``, ``/etc``), and a header there that does not
    compile would be shown in full; one inside the source's directory is own as that
    directory's. The same holds for an absolute ``#include``. A header of one's own kept
    beside the program's directory (``../include``) is located, not shown: keep it under
    the program's directory to see its diagnostics.
    """
    blocks: list[list[str]] = []
    for line in stderr.splitlines():
        starts = _DIAGNOSTIC.match(line) or _INCLUDED_FROM.match(line)
        if starts and not (blocks and _INCLUDED_FROM.match(blocks[-1][-1])):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    out: list[str] = []
    for block in blocks:
        head = next((line for line in block if _DIAGNOSTIC.match(line)), None)
        if head is None:  # "1 error generated." and the like
            out += [line for line in block if line.endswith("generated.")]
            continue
        where = Path(_DIAGNOSTIC.match(head)["file"]).resolve()
        if any(where.is_relative_to(d) for d in own):
            out += block
        elif any(where.is_relative_to(d) for d in (HEADERS, *_SYSTEM_HEADERS)):
            out.append(head)
        else:
            out.append(
                f"{head.split(': ', 1)[0]}: a diagnostic in a file outside the program's "
                "directory (its text is not shown; files under the program's directory are)"
            )
    text = "\n".join(out).strip()
    return text if len(text) <= limit else text[:limit] + "\n[...]"


VMLINUX_SHIPPED = Path(__file__).resolve().parent / "data" / "bpf" / "vmlinux" / "vmlinux.h.gz"


KERNEL_BTF = Path("/sys/kernel/btf/vmlinux")


def vmlinux_dir() -> Path:
    """A directory holding ``vmlinux.h`` for ``#include "vmlinux.h"``: dumped from the
    running kernel's BTF (``bpftool btf dump file /sys/kernel/btf/vmlinux format c``),
    cached by the BTF's sha256, where there is one; otherwise the one tcplab ships for
    its simulated kernel (Linux 6.18's, gzipped: 2.8 MB as text), unpacked once."""
    base = cache_dir() / "vmlinux"
    try:
        btf = KERNEL_BTF.read_bytes()
    except OSError:
        btf = None
    bpftool = shutil.which("bpftool")
    if btf is not None and bpftool is not None:
        where = base / f"btf-{hashlib.sha256(btf).hexdigest()[:16]}"
        if not (where / "vmlinux.h").is_file():
            try:
                r = subprocess.run(
                    [bpftool, "btf", "dump", "file", str(KERNEL_BTF), "format", "c"],
                    capture_output=True,
                    timeout=60,
                )
            except subprocess.TimeoutExpired:
                r = None
            if r is not None and r.returncode == 0 and r.stdout:
                _write_atomic(where / "vmlinux.h", r.stdout)
        if (where / "vmlinux.h").is_file():
            return where
    return shipped_vmlinux_dir()


def shipped_vmlinux_dir() -> Path:
    """A directory holding the ``vmlinux.h`` tcplab ships (Linux 6.18's), unpacked once
    into the cache."""
    base = cache_dir() / "vmlinux"
    packed = VMLINUX_SHIPPED.read_bytes()
    where = base / f"shipped-{hashlib.sha256(packed).hexdigest()[:16]}"
    if not (where / "vmlinux.h").is_file():
        _write_atomic(where / "vmlinux.h", gzip.decompress(packed))
    return where


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def _reusable(index: Path, out: Path) -> Path | None:
    """The object an index record names, if every file of its depfile still has the
    recorded bytes and the object is intact; else None (then: compile again)."""
    try:
        record = json.loads(index.read_text())
        deps, name = dict(record["deps"]), str(record["object"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not deps or any(_file_digest(Path(p)) != h for p, h in deps.items()):
        return None
    return verified(out / name)


def verified(path: Path) -> Path | None:
    """``path`` (a cached ``<sha256>.o``) if its bytes have that sha256; a file that does
    not (swapped, truncated, tampered with) is removed and None returned, so that it is
    never run under the digest it is named by."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() == path.stem:
        return path
    path.unlink(missing_ok=True)
    return None


def depfile_paths(text: str, cwd: Path) -> list[Path]:
    """The prerequisites of a Make-style depfile as clang writes it (``-MD -MF``):
    ``target: dep dep \\`` continued over lines, spaces inside a name escaped with a
    backslash; relative names against ``cwd``."""
    body = text.replace("\\\n", " ")
    _, _, deps = body.partition(": ")
    names = [n.replace("\\ ", " ") for n in re.findall(r"(?:\\ |[^\s])+", deps)]
    return [p if p.is_absolute() else cwd / p for p in map(Path, names)]


def _file_digest(path: Path) -> str | None:
    """The sha256 of a regular file, read in chunks (a header the depfile names may be
    large; a device or FIFO is never read: None)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _digest(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_DEFINE_VALUE = re.compile(r"^[A-Za-z0-9_.+\-x()<>* ]*$")


def check_build(build: Build) -> list[tuple[str, str]]:
    """Problems with a flow's compile options: (sub-path of ``bpf``, message) pairs."""
    out: list[tuple[str, str]] = []
    for i, d in enumerate(build.include):
        if not Path(d).is_absolute() or not Path(d).is_dir():
            out.append((f"include[{i}]", f"'{d}': not a directory"))
    for name, value in build.define:
        if not _IDENTIFIER.match(name):
            out.append((f"define.{name}", "a C identifier (letters, digits, _) is required"))
        elif not _DEFINE_VALUE.match(value) or len(value) > 200:
            out.append(
                (
                    f"define.{name}",
                    f"'{value}': a number or a simple C expression "
                    "(letters, digits and _ . + - * ( ) < > x, at most 200 characters)",
                )
            )
    return out


def _read(source: Path) -> bytes:
    try:
        if not source.is_file():
            raise BpfBuildError(f"{source}: not a file")
        if source.stat().st_size > MAX_SOURCE_BYTES:
            raise BpfBuildError(f"{source}: larger than {MAX_SOURCE_BYTES >> 20} MB")
        return source.read_bytes()
    except OSError as exc:
        raise BpfBuildError(f"{source}: {exc.strerror}") from None


def _store(data: bytes, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{hashlib.sha256(data).hexdigest()}.o"
    if verified(path) is None:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


def compiler_missing() -> str | None:
    """What of clang and libbpf's headers is missing here, or None."""
    lacking = [
        what
        for what, there in (
            ("clang", shutil.which("clang") is not None),
            ("libbpf's headers (/usr/include/bpf)", LIBBPF_HEADERS.is_file()),
        )
        if not there
    ]
    return " and ".join(lacking) or None


LIBBPF_HEADERS = Path("/usr/include/bpf/bpf_helpers.h")


def _clang() -> str:
    found = shutil.which("clang")
    if found is None:
        raise BpfBuildError(
            "compiling a .bpf.c needs clang and libbpf's headers "
            "(Debian: apt-get install clang libbpf-dev); `tcplab doctor` checks"
        )
    return found


@functools.lru_cache(maxsize=1)
def _clang_version() -> str:
    try:
        r = subprocess.run([_clang(), "--version"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise BpfBuildError("`clang --version` did not answer within 30 s") from None
    if r.returncode != 0 or not r.stdout.strip():
        raise BpfBuildError(f"`clang --version` failed (exit {r.returncode}): {r.stderr.strip()}")
    return r.stdout.strip()
