"""BPF congestion controls on the kernel backend: a flow's ``bpf:`` program (the very
object the simulator runs, tcplab.bpf) is registered into the running kernel for the run
under a run-unique name by ``tcplab-bpfload`` (crates/bpfload: libbpf 1.7 through
libbpf-rs, so ``.struct_ops.link``, several struct_ops per object and ``.kconfig``
externs such as ``CONFIG_HZ`` load as they do for the kernel's own programs), the agents
select it with ``TCP_CONGESTION`` like any other, and it is unregistered when the run
ends.

* **Unique names.** Two runs, or a run and a program a user loaded, must not collide in
  the kernel's list of congestion controls, so the loader renames each object's
  ``tcp_congestion_ops`` to ``tl<pid><k>`` (the process that owns it and the object's
  index; a letter more when an object has several struct_ops) before loading it: it
  finds the ``name`` member through the object's BTF, so no ELF is parsed here.
* **Lifetime.** The loader holds the registrations until its standard input closes or it
  gets SIGTERM, then unregisters them. If the run dies with SIGKILL, its pipe closes and
  the loader unregisters on its own; ``.struct_ops.link`` registrations also end with the
  loader's link fds. Plain ``.struct_ops`` maps survive a SIGKILLed loader (the kernel
  keeps them), so the run writes ``/run/tcplab/bpf-<pid>.json`` with their map ids, and
  the next kernel run or ``tcplab doctor`` unregisters what a dead process left
  (:func:`clean_stale`), as for namespaces.
* **Parameters.** A flow's ``params`` are written into the copy's ``.rodata`` before it
  is registered (``tcplab.bpf.kernel_object``), as a libbpf skeleton sets
  ``skel->rodata->NAME`` before load: the verifier then sees the flow's values as
  constants, exactly as the simulator runs them. Flows of one program with different
  ``params`` are registered as different copies.
* **The verifier's word.** :func:`verify` loads an object into the kernel without
  registering it and returns libbpf's log, which names the program the verifier refused.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tcplab.backends.kernel.netns import alive
from tcplab.bpf_loader import (
    LOADER,
    LOADER_TIMEOUT_S,
    BpfLoadError,
    _loader_cmd,
    _refusal,
    loader,
)

STATE_DIR = Path("/run/tcplab")
TCP_CA_NAME_MAX = 16  # include/net/tcp.h


def unique_name(pid: int, k: int) -> str:
    name = f"tl{pid}{chr(ord('a') + k % 26)}"
    assert len(name) < TCP_CA_NAME_MAX - 1  # room for a letter per struct_ops
    return name


@dataclass
class Registration:
    """Programs registered for one run: the kernel names of each object's chosen
    struct_ops, in order, and the loader process holding them."""

    names: list[str]
    ids: list[int]
    process: subprocess.Popen | None = None
    all_names: list[str] = field(default_factory=list)
    # Each loaded program's tag (kallsyms' bpf_prog_<tag>_<function>) -> the name of
    # the program it belongs to, as the run reports it: how printk.py attributes lines.
    tags: dict[str, str] = field(default_factory=dict)
    # The program name of each object, in order, and, once unregistered, what the
    # loader read from their maps just before: [{"program", "maps": [...]}].
    programs: list[str] = field(default_factory=list)
    maps: list[dict] = field(default_factory=list)


def _record(pid: int) -> Path:
    return STATE_DIR / f"bpf-{pid}.json"


def _read_line(p: subprocess.Popen, timeout_s: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    if not sel.select(timeout_s):
        p.kill()
        raise BpfLoadError(f"{LOADER} did not answer within {timeout_s:.0f} s")
    return p.stdout.readline()


def register(objects: list[tuple[bytes, str]]) -> Registration:
    """Register each (object file's bytes, its program name) under a unique name; return
    the registration (:func:`unregister` ends it). The program name (a struct_ops
    variable or ``.name``) selects, in an object with several struct_ops, the one the
    flows use: only it (or those of that ``.name``) is registered; the object's other
    programs and maps are loaded, as a skeleton's ``open_and_load`` does."""
    pid = os.getpid()
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    record = _record(pid)
    record.write_text(json.dumps({"pid": pid, "ids": []}))
    with tempfile.TemporaryDirectory(prefix=f"tcplab-bpf-{pid}-") as tmp:
        args: list[str] = []
        for k, (data, name) in enumerate(objects):
            # Named as the program will be: libbpf names its .rodata/.bss maps after it.
            path = Path(tmp) / f"{unique_name(pid, k)}.bpf.o"
            path.write_bytes(data)
            # Only the struct_ops the flows run is registered ("/NAME"), as the kernel's
            # selftests attach only the one they test: another in the object may be one
            # the kernel would refuse (bpf_dctcp.c's dctcp_nouse has no ssthresh).
            args += [f"{unique_name(pid, k)}/{name}", str(path)]
        p = subprocess.Popen(
            [*_loader_cmd(), "register", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # everything it says is in its JSON line
            text=True,
        )
        try:
            line = _read_line(p, LOADER_TIMEOUT_S)
            answer = json.loads(line) if line.strip() else {}
        except (BpfLoadError, ValueError) as exc:
            _stop(p)
            record.unlink(missing_ok=True)
            raise BpfLoadError(str(exc)) from None
        except BaseException:
            _stop(p)
            record.unlink(missing_ok=True)
            raise
    if not answer.get("ok"):
        _stop(p)
        record.unlink(missing_ok=True)
        raise BpfLoadError(_refusal(answer))
    done = answer["registered"]
    ids = [int(r["id"]) for r in done if not r["link"]]
    record.write_text(json.dumps({"pid": pid, "loader": p.pid, "ids": ids}))
    names = []
    tags: dict[str, str] = {}
    for k, (_data, prog_name) in enumerate(objects):
        mine = [r for r in done if r["object"].endswith(f"/{unique_name(pid, k)}.bpf.o")]
        chosen = [r for r in mine if r["ops_name"] == prog_name] or mine
        names.append(chosen[0]["name"])
        for r in mine:
            for prog in r.get("programs") or []:
                tags.setdefault(str(prog["tag"]), prog_name)
    return Registration(
        names, ids, p, [r["name"] for r in done], tags, [name for _, name in objects]
    )


def snapshot(reg: Registration) -> None:
    """Have the loader read the programs' maps now (its ``dump`` line): what
    :func:`unregister` reports is then the maps at this moment, the run's end, not at
    unregistration, after the closing connections' timeouts ran the programs again."""
    p = reg.process
    if p is None or p.poll() is not None or p.stdin is None:
        return
    try:
        p.stdin.write("dump\n")
        p.stdin.flush()
    except (OSError, ValueError):  # the loader is gone, or its pipe closed meanwhile
        pass


def _stop(p: subprocess.Popen) -> list[dict]:
    """End the loader (its stdin closed) and return the map dump it prints as it ends
    (``{"maps": [{"object", "maps"}]}``), or [] if it said nothing more."""
    said = ""
    if p.poll() is None:
        try:
            said, _ = p.communicate(timeout=10)  # closes stdin, reads to the end
        except (OSError, ValueError, subprocess.TimeoutExpired):
            p.kill()
            p.wait(5)
    dumps: list[dict] = []
    for line in (said or "").splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and isinstance(answer.get("maps"), list):
            dumps = answer["maps"]
    for f in (p.stdin, p.stdout, p.stderr):
        if f is not None:
            try:
                f.close()
            except OSError:
                pass
    return dumps


def unregister(reg: Registration | list[int], pid: int | None = None) -> None:
    """End a registration: the loader unregisters what it holds as it exits; plain
    struct_ops ids still present after that (a loader that was killed) are removed by
    id. Drops the run's record."""
    ids = reg.ids if isinstance(reg, Registration) else reg
    if isinstance(reg, Registration) and reg.process is not None:
        dumps = _stop(reg.process)
        reg.maps = [
            {"program": name, "maps": d.get("maps", [])} for name, d in zip(reg.programs, dumps)
        ]
    if ids and loader() is not None:
        subprocess.run(
            [*_loader_cmd(), "unregister", *map(str, ids)],
            capture_output=True,
            timeout=LOADER_TIMEOUT_S,
        )
    _record(os.getpid() if pid is None else pid).unlink(missing_ok=True)


def _is_loader(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == LOADER[:15]
    except OSError:
        return False


def clean_stale() -> list[int]:
    """Unregister the programs of kernel runs whose process is gone; return their ids."""
    if not STATE_DIR.is_dir() or loader() is None:
        return []
    removed: list[int] = []
    for record in STATE_DIR.glob("bpf-*.json"):
        try:
            state = json.loads(record.read_text())
            pid, ids = int(state["pid"]), [int(i) for i in state["ids"]]
            held_by = state.get("loader")
        except (OSError, ValueError, KeyError, TypeError):
            record.unlink(missing_ok=True)
            continue
        if pid != os.getpid() and not alive(pid):
            if isinstance(held_by, int) and _is_loader(held_by):
                try:
                    os.kill(held_by, signal.SIGTERM)  # it unregisters what it holds
                except OSError:
                    pass
            unregister(ids, pid)
            removed += ids
    return removed
