"""BPF congestion controls on the kernel backend: a flow's ``bpf:`` program (the very
object the simulator runs, tcplab.bpf) is registered into the running kernel with
``bpftool struct_ops register`` under a run-unique name, the agents select it with
``TCP_CONGESTION`` like any other, and it is unregistered when the run ends.

* **Unique names.** Two runs, or a run and a program a user loaded, must not collide in
  the kernel's list of congestion controls, so each object is registered as a copy whose
  ``tcp_congestion_ops.name`` (16 bytes in the ``.struct_ops`` section, where libbpf reads
  it) says ``tl<pid><k>``: the process that owns it and its index.
* **Cleanup.** Before registering, the run writes ``/run/tcplab/bpf-<pid>.json`` and adds
  each struct_ops map id as it registers; on exit, Ctrl-C or SIGTERM the ``finally`` of
  the run unregisters them; after a SIGKILL, the next kernel run or ``tcplab doctor``
  unregisters what a dead process left (:func:`clean_stale`), as for namespaces.
* **Parameters.** A flow's ``params`` are written into the copy's ``.rodata`` before it
  is registered (``tcplab.bpf.kernel_object``), as a libbpf skeleton sets
  ``skel->rodata->NAME`` before load: the verifier then sees the flow's values as
  constants, exactly as the simulator runs them. Flows of one program with different
  ``params`` are registered as different copies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from tcplab.backends.kernel.netns import alive

STATE_DIR = Path("/run/tcplab")
TCP_CA_NAME_MAX = 16  # include/net/tcp.h
_SECTIONS = (b".struct_ops", b".struct_ops.link")


class BpfLoadError(RuntimeError):
    """bpftool or the kernel refused a program; the message has bpftool's words."""


def available() -> str | None:
    """Why BPF programs cannot be loaded here, or None."""
    if shutil.which("bpftool") is None:
        return "bpftool is missing (Debian: apt-get install bpftool)"
    if not Path("/sys/kernel/btf/vmlinux").is_file():
        return "the kernel has no BTF (/sys/kernel/btf/vmlinux): it cannot load struct_ops"
    return None


def unique_name(pid: int, k: int) -> str:
    name = f"tl{pid}{chr(ord('a') + k % 26)}"
    assert len(name) < TCP_CA_NAME_MAX
    return name


def renamed(data: bytes, old: str, new: str) -> bytes:
    """The ELF object ``data`` with its ``tcp_congestion_ops.name`` ``old`` replaced by
    ``new`` inside the struct_ops section (ELF64, little-endian, as clang -target bpf
    writes on x86)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise BpfLoadError("not a 64-bit little-endian ELF object")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = sections[shstrndx][4]
    for sh_name, _type, _flags, _addr, offset, size in sections:
        end = data.index(b"\0", names_off + sh_name)
        if data[names_off + sh_name : end] not in _SECTIONS:
            continue
        body = data[offset : offset + size]
        at = body.find(old.encode() + b"\0")
        if at < 0 or len(new) >= TCP_CA_NAME_MAX:
            break
        field = new.encode().ljust(max(len(old), len(new)) + 1, b"\0")
        start = offset + at
        return data[:start] + field + data[start + len(field) :]
    raise BpfLoadError(f"no tcp_congestion_ops named '{old}' in the object's struct_ops section")


def _record(pid: int) -> Path:
    return STATE_DIR / f"bpf-{pid}.json"


def _bpftool(*args: str) -> str:
    r = subprocess.run(["bpftool", *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise BpfLoadError((r.stderr or r.stdout).strip()[-1500:] or f"bpftool exit {r.returncode}")
    return r.stdout + r.stderr  # bpftool says "Registered ... id N" on stderr


def register(objects: list[tuple[bytes, str]]) -> tuple[list[str], list[int]]:
    """Register each (object file's bytes, its program name) under a unique name; return
    the kernel names, in order, and the struct_ops map ids (for :func:`unregister`)."""
    pid = os.getpid()
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    record = _record(pid)
    ids: list[int] = []
    names: list[str] = []
    record.write_text(json.dumps({"pid": pid, "ids": ids}))
    with tempfile.TemporaryDirectory(prefix=f"tcplab-bpf-{pid}-") as tmp:
        try:
            _register_each(objects, Path(tmp), pid, record, ids, names)
        except BaseException:  # a refusal or a signal half-way: undo what was registered
            unregister(ids)
            raise
    return names, ids


def _register_each(
    objects: list[tuple[bytes, str]],
    tmp: Path,
    pid: int,
    record: Path,
    ids: list[int],
    names: list[str],
) -> None:
    for k, (data, prog_name) in enumerate(objects):
        name = unique_name(pid, k)
        copy = tmp / f"{name}.o"
        copy.write_bytes(renamed(data, prog_name, name))
        out = _bpftool("struct_ops", "register", str(copy))
        m = re.search(r"\bid (\d+)", out)
        if m is None:
            raise BpfLoadError(f"bpftool registered {copy.name} but said no id: {out!r}")
        ids.append(int(m.group(1)))
        record.write_text(json.dumps({"pid": pid, "ids": ids}))
        names.append(name)


def unregister(ids: list[int], pid: int | None = None) -> None:
    """Unregister the struct_ops maps ``ids`` (those still there) and drop the record."""
    shown = subprocess.run(
        ["bpftool", "-j", "struct_ops", "show"], capture_output=True, text=True, timeout=60
    ).stdout
    present = {m["id"] for m in json.loads(shown or "[]")}
    for i in ids:
        if i in present:
            try:
                _bpftool("struct_ops", "unregister", "id", str(i))
            except BpfLoadError:
                pass
    _record(os.getpid() if pid is None else pid).unlink(missing_ok=True)


def clean_stale() -> list[int]:
    """Unregister the programs of kernel runs whose process is gone; return their ids."""
    if not STATE_DIR.is_dir() or shutil.which("bpftool") is None:
        return []
    removed: list[int] = []
    for record in STATE_DIR.glob("bpf-*.json"):
        try:
            state = json.loads(record.read_text())
            pid, ids = int(state["pid"]), [int(i) for i in state["ids"]]
        except (OSError, ValueError, KeyError, TypeError):
            record.unlink(missing_ok=True)
            continue
        if pid != os.getpid() and not alive(pid):
            unregister(ids, pid)
            removed += ids
    return removed
