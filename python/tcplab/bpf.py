"""Congestion controls as BPF ``struct_ops`` programs: ``cc = "bpf:path/to/algo.bpf.c"``
(or a compiled ``.bpf.o``) in a spec, relative to the spec file.

A ``.bpf.c`` is compiled with clang (``-target bpf -O2 -g``) against the header tcplab
ships (``tcplab/data/bpf/include/tcplab_cc.h``, the kernel structures a congestion
control touches, marked for CO-RE relocation) and libbpf's ``bpf_helpers.h``. Objects
are cached under ``$TCPLAB_CACHE/bpf`` (default ``~/.cache/tcplab/bpf``) by the sha256
of their own bytes, so the engine config names ``<sha256>.o`` and a run's digest covers
the object the run executed; an index keyed by the source, the header and the compiler
avoids recompiling. The program's parameters are its ``const volatile`` globals
(read-only data, as libbpf skeletons set them): a flow's ``params`` set them, and
unknown names or wrong types are refused naming the parameter (the engine's
``tcplab_bpf`` reads them, :func:`program`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "bpf:"
HEADERS = Path(__file__).resolve().parent / "data" / "bpf" / "include"
CFLAGS = ["-target", "bpf", "-O2", "-g", "-Wall", "-Wno-unused-function"]
MAX_SOURCE_BYTES = 16 * 2**20


class BpfBuildError(ValueError):
    """A program that cannot be used: the message says why (clang's own words for a
    compile error)."""


@dataclass(frozen=True)
class Program:
    """A compiled program: its ``tcp_congestion_ops`` name, cached object and
    parameters (``[{"name", "kind", "min", "max", "default"}]``)."""

    name: str
    object_path: Path
    params: tuple[dict[str, Any], ...]


def is_bpf(cc: str) -> bool:
    return isinstance(cc, str) and cc.startswith(PREFIX)


def source_of(cc: str) -> Path:
    return Path(cc[len(PREFIX) :])


def cache_dir() -> Path:
    base = os.environ.get("TCPLAB_CACHE") or str(Path.home() / ".cache" / "tcplab")
    return Path(base) / "bpf"


def absolute_paths(raw: Any, base: Path) -> Any:
    """``raw`` (a spec as read from TOML) with every ``bpf:`` path of a flow's ``cc`` (or a
    swept ``...cc`` list) made absolute against ``base``, the spec file's directory."""
    if isinstance(raw, dict):
        for k, v in raw.items():
            if k == "cc" or k.endswith(".cc"):
                if isinstance(v, str):
                    raw[k] = _absolute(v, base)
                elif isinstance(v, list):
                    raw[k] = [_absolute(x, base) if isinstance(x, str) else x for x in v]
            else:
                absolute_paths(v, base)
    elif isinstance(raw, list):
        for v in raw:
            absolute_paths(v, base)
    return raw


def _absolute(cc: str, base: Path) -> str:
    if not is_bpf(cc) or Path(cc[len(PREFIX) :]).is_absolute():
        return cc
    return PREFIX + str((base / cc[len(PREFIX) :]).resolve())


def object_for(source: Path) -> Path:
    """The cached object of a ``.bpf.c`` (compiled if needed) or of a ``.o``.

    Raises
    ------
    BpfBuildError
        The file is missing, not a regular file, too large, or does not compile.
    """
    data = _read(source)
    out = cache_dir()
    if source.suffix == ".o":
        return _store(data, out)
    key = hashlib.sha256(
        b"\0".join([data, _header_bytes(), _clang_version().encode(), " ".join(CFLAGS).encode()])
    ).hexdigest()
    index = out / f"src-{key}"
    if index.is_file():
        cached = out / index.read_text().strip()
        if cached.is_file():
            return cached
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "prog.o"
        cmd = [_clang(), *CFLAGS, "-I", str(HEADERS), "-c", str(source), "-o", str(obj)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise BpfBuildError(f"{source} does not compile (clang):\n{r.stderr.strip()[-3000:]}")
        stored = _store(obj.read_bytes(), out)
    index.write_text(stored.name)
    return stored


@functools.lru_cache(maxsize=64)
def _program(object_path: str) -> Program:
    from tcplab.engine import engine

    try:
        info = engine().bpf_object(object_path)
    except ValueError as exc:
        raise BpfBuildError(str(exc)) from None
    return Program(info["name"], Path(object_path), tuple(info["params"]))


def program(cc: str) -> Program:
    """The compiled program a ``bpf:`` cc names (compiling it if needed)."""
    return _program(str(object_for(source_of(cc))))


def kernel_object(object_path: str, params: dict[str, Any]) -> tuple[bytes, str]:
    """What the kernel backend registers for a flow: the object file with ``params``
    written into its ``.rodata`` (as a libbpf skeleton sets ``skel->rodata->NAME`` before
    load; ``crates/bpf`` ``patched_elf``), and the program's name."""
    from tcplab.engine import engine

    name = _program(object_path).name
    if not params:
        return Path(object_path).read_bytes(), name
    try:
        data = engine().bpf_patched(object_path, json.dumps(params, sort_keys=True))
    except ValueError as exc:
        raise BpfBuildError(str(exc)) from None
    return bytes(data), name


def check(cc: str, given: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with a ``bpf:`` cc and its ``params``: (sub-path, message) pairs, the
    sub-path ``cc`` or ``params.<name>``."""
    try:
        prog = program(cc)
    except BpfBuildError as exc:
        return [("cc", str(exc))]
    known = {p["name"]: p for p in prog.params}
    for key, value in given.items():
        p = known.get(key)
        if p is None:
            names = ", ".join(known) or "it has none"
            return [
                (
                    f"params.{key}",
                    f"'{key}' is not a parameter of {prog.name} (a const volatile global); "
                    f"known: {names}",
                )
            ]
        if p["kind"] == "bool":
            if not isinstance(value, bool):
                return [
                    (f"params.{key}", f"parameter '{key}' of {prog.name}: expected true or false")
                ]
        elif (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not p["min"] <= value <= p["max"]
        ):
            return [
                (
                    f"params.{key}",
                    f"parameter '{key}' of {prog.name}: expected a whole number in "
                    f"[{p['min']:.0f}, {p['max']:.0f}]",
                )
            ]
    return []


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
    if not path.is_file():
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


def _header_bytes() -> bytes:
    return b"".join(p.read_bytes() for p in sorted(HEADERS.glob("*.h")))


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
    return subprocess.run(
        [_clang(), "--version"], capture_output=True, text=True, timeout=60
    ).stdout.strip()
