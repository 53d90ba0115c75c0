"""Congestion controls as BPF ``struct_ops`` programs: ``cc = "bpf:path/to/algo.bpf.c"``
(or a compiled ``.bpf.o``) in a spec, relative to the spec file; ``cc = "bpf:cubic"``
(a name without ``/`` or ``.``) is one of the shipped examples.

This module names programs (``bpf:`` references, the shipped examples) and asks the
engine what a compiled object holds; compiling and the object cache (clang, the sha256
cache, vmlinux.h) are tcplab.bpf_build's, whose public names are re-exported here. The
program's parameters are its ``const volatile`` globals (read-only data, as libbpf
skeletons set them): a flow's ``params`` set them, and unknown names or wrong types are
refused naming the parameter (the engine's ``tcplab_bpf`` reads them, :func:`program`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcplab import bpf_loader
from tcplab.bpf_build import (
    CFLAGS,
    CLANG_TIMEOUT_S,
    HEADERS,
    KERNEL_BTF,
    LIBBPF_HEADERS,
    MAX_SOURCE_BYTES,
    NO_BUILD,
    VMLINUX_SHIPPED,
    BpfBuildError,
    Build,
    _digest,
    _write_atomic,
    cache_dir,
    check_build,
    clang_messages,
    compiler_missing,
    depfile_paths,
    object_for,
    shipped_vmlinux_dir,
    verified,
    vmlinux_dir,
)
from tcplab.cc_names import map_cc
from tcplab.engine import engine

# The compile names stay reachable as tcplab.bpf.NAME, as they were before the split.
__all__ = [
    "CFLAGS",
    "CLANG_TIMEOUT_S",
    "EXAMPLES",
    "HEADERS",
    "KERNEL_BTF",
    "LIBBPF_HEADERS",
    "MAX_SOURCE_BYTES",
    "NO_BUILD",
    "PREFIX",
    "SHORT_NAME",
    "VMLINUX_SHIPPED",
    "BpfBuildError",
    "Build",
    "Program",
    "absolute_paths",
    "cache_dir",
    "check",
    "check_build",
    "clang_messages",
    "compiler_missing",
    "depfile_paths",
    "example_names",
    "is_bpf",
    "kernel_object",
    "kernel_verdict",
    "object_for",
    "program",
    "shipped_vmlinux_dir",
    "source_of",
    "split_ref",
    "verified",
    "vmlinux_dir",
]

PREFIX = "bpf:"


@dataclass(frozen=True)
class Program:
    """A compiled program: its ``tcp_congestion_ops`` name, cached object and
    parameters (``[{"name", "kind", "min", "max", "default"}]``), which of the
    object's ``tcp_congestion_ops`` it is when the object has several (``ops``)."""

    name: str
    object_path: Path
    params: tuple[dict[str, Any], ...]
    ops: str | None = None
    flags: int = 0  # tcp_congestion_ops.flags

    @property
    def needs_ecn(self) -> bool:
        """``TCP_CONG_NEEDS_ECN`` (include/net/tcp.h: 0x2) in the program's flags: it
        requests ECN, and the receiving host runs it too for its CE echo, as in a DCTCP
        deployment (the simulator's ``world::build``, the kernel backend's receivers)."""
        return bool(self.flags & 0x2)

    @property
    def engine_ref(self) -> str:
        """How the engine config names it (``bpf_object``): the object's path, with
        ``#OPS`` appended when a flow chose one of several (tcplab_bpf::split_object_ref)."""
        return str(self.object_path) + (f"#{self.ops}" if self.ops else "")


def split_ref(object_ref: str) -> tuple[str, str | None]:
    """An engine config's ``bpf_object`` as (object path, chosen ops or None), as
    tcplab_bpf::split_object_ref splits it."""
    path, sep, ops = object_ref.rpartition("#")
    if sep and ops and "/" not in ops:
        return path, ops
    return object_ref, None


def is_bpf(cc: str) -> bool:
    return isinstance(cc, str) and cc.startswith(PREFIX)


EXAMPLES = Path(__file__).resolve().parent / "data" / "bpf" / "examples"


SHORT_NAME = re.compile(r"[a-z][a-z0-9_]*")
"""A ``bpf:`` name without ``/`` or ``.`` names a shipped example (``bpf:cubic`` is
``tcplab/data/bpf/examples/cubic.bpf.c``); a file of one's own is named by a path
(``bpf:./cubic.bpf.c``, ``bpf:algo.bpf.o``)."""


def example_names() -> list[str]:
    """The shipped examples' short names (``bpf:NAME``)."""
    return sorted(p.name.removesuffix(".bpf.c") for p in EXAMPLES.glob("*.bpf.c"))


def source_of(cc: str) -> Path:
    """The file a ``bpf:`` cc names: a shipped example for a short name, else the path."""
    text = cc[len(PREFIX) :]
    if not SHORT_NAME.fullmatch(text):
        return Path(text)
    if text not in example_names():
        raise BpfBuildError(
            f"{cc}: no shipped example is named {text!r} (shipped: "
            f"{', '.join(example_names())}); a file of your own is named by a path, "
            f"e.g. bpf:./{text}.bpf.c"
        )
    return EXAMPLES / f"{text}.bpf.c"


def absolute_paths(raw: Any, base: Path) -> Any:
    """``raw`` (a spec as read from TOML) with every ``bpf:`` path of a flow's ``cc`` (or a
    swept ``...cc`` list), and every ``bpf.include`` directory, made absolute against
    ``base``, the spec file's directory."""

    def include(key: str, value: Any) -> bool:
        if key == "bpf" and isinstance(value, dict) and isinstance(value.get("include"), list):
            value["include"] = [
                str((base / d).resolve()) if isinstance(d, str) else d for d in value["include"]
            ]
            return True
        return False

    return map_cc(raw, lambda cc: _absolute(cc, base), include)


def _absolute(cc: str, base: Path) -> str:
    rest = cc[len(PREFIX) :] if is_bpf(cc) else ""
    if not rest or Path(rest).is_absolute() or SHORT_NAME.fullmatch(rest):
        return cc  # not BPF, absolute already, or a shipped example's short name
    return PREFIX + str((base / cc[len(PREFIX) :]).resolve())


@functools.lru_cache(maxsize=64)
def _program(object_ref: str) -> Program:
    try:
        info = engine().bpf_object(object_ref)
    except ValueError as exc:
        raise BpfBuildError(str(exc)) from None
    path, ops = split_ref(object_ref)
    return Program(info["name"], Path(path), tuple(info["params"]), ops, int(info["flags"]))


def program_at(object_ref: str) -> Program:
    """The program an engine config's ``bpf_object`` names (``PATH`` or ``PATH#OPS``)."""
    return _program(object_ref)


def program(cc: str, build: Build = NO_BUILD) -> Program:
    """The compiled program a ``bpf:`` cc names (compiling it if needed); ``build.ops``
    chooses one of several ``tcp_congestion_ops``."""
    return _choose(object_for(source_of(cc), build), build.ops)


def _choose(obj: Path, ops: str | None) -> Program:
    return _program(str(obj) + (f"#{ops}" if ops else ""))


def kernel_object(object_path: str, params: dict[str, Any]) -> tuple[bytes, str]:
    """What the kernel backend registers for a flow (``object_path`` as the engine config
    names it, ``PATH`` or ``PATH#OPS``): the object file with ``params`` written into its
    ``.rodata`` (as a libbpf skeleton sets ``skel->rodata->NAME`` before load;
    ``crates/bpf`` ``patched_elf``), and the program's name."""

    path, _ops = split_ref(object_path)
    if verified(Path(path)) is None:
        raise BpfBuildError(
            f"{path}: the cached object no longer has the sha256 it is named by "
            "(changed since it was compiled); run again to rebuild it"
        )
    name = _program(object_path).name
    if not params:
        return Path(path).read_bytes(), name
    try:
        data = engine().bpf_patched(object_path, json.dumps(params, sort_keys=True))
    except ValueError as exc:
        raise BpfBuildError(str(exc)) from None
    return bytes(data), name


def check(cc: str, given: dict[str, Any], build: Build = NO_BUILD) -> list[tuple[str, str]]:
    """Problems with a ``bpf:`` cc and its ``params``: (sub-path, message) pairs, the
    sub-path ``cc`` or ``params.<name>``."""
    try:
        obj = object_for(source_of(cc), build)
    except BpfBuildError as exc:
        return [("cc", str(exc))]
    try:
        prog = _choose(obj, build.ops)
    except BpfBuildError as exc:
        return [("bpf.ops" if build.ops else "cc", str(exc))]
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
    refused = kernel_verdict(prog, given)
    return [] if refused is None else [("cc", refused)]


def kernel_verdict(prog: Program, params: dict[str, Any]) -> str | None:
    """Where the kernel's verifier is at hand (root, BTF, tcplab-bpfload), load the object
    with ``params`` into it without registering it (``tcplab-bpfload verify``): None if it
    passes, else the refusal with the verifier's log, which names the program. A pass is
    remembered per object bytes and kernel release; nothing is checked elsewhere."""
    if os.geteuid() != 0 or not KERNEL_BTF.is_file():
        return None

    if bpf_loader.loader() is None:
        return None
    data, _ = kernel_object(prog.engine_ref, params)
    mark = (
        cache_dir()
        / "verified"
        / (f"{hashlib.sha256(data).hexdigest()}-{_digest([os.uname().release.encode()])[:16]}")
    )
    if mark.is_file():
        return None
    why = bpf_loader.verify(data)
    if why is not None:
        return f"the kernel's verifier refuses {prog.name} ({os.uname().release}): {why}"
    _write_atomic(mark, b"")
    return None
