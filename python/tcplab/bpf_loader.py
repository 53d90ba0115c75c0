"""The BPF loader, tcplab-bpfload (crates/bpfload: libbpf 1.7 through libbpf-rs): how to
start it, whether it can run here, and its ``verify`` mode, which loads an object into the
kernel's verifier without registering it. The kernel backend registers programs with it
(backends/kernel/bpf_ops.py); tcplab.bpf asks it for the verifier's verdict when a spec
is validated. A leaf, so both may use it.

The loader is compiled into the extension module (``tcplab._engine.bpfload``), so every
install has it, the wheel too (libbpf, libelf and zlib linked in statically there). It
runs as a process of its own, ``python -m tcplab.bpf_loader ARGS`` (it holds the
registrations and waits for a signal), with the command line and JSON answers of the
``tcplab-bpfload`` binary that ``cargo build -p tcplab-bpfload`` also builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

LOADER = "tcplab-bpfload"
"""The loader's name, in messages and as its process name (``/proc/PID/comm``: the
library sets it, so a loader started through Python is recognised as one)."""
LOADER_TIMEOUT_S = 60.0
"""Loading a congestion control takes well under a second; a minute means it hangs."""


class BpfLoadError(RuntimeError):
    """The loader, libbpf or the kernel refused a program; the message has their words."""


def loader() -> list[str] | None:
    """The command that starts the loader (arguments follow it): ``$TCPLAB_BPFLOAD`` (a
    ``tcplab-bpfload`` binary, e.g. one under test) when set, else this Python running the
    extension's copy; None when neither is there."""
    named = os.environ.get("TCPLAB_BPFLOAD")
    if named:
        return [named] if Path(named).is_file() else None
    try:
        from tcplab import _engine  # type: ignore[attr-defined]
    except ImportError:  # the extension is not built: nothing runs at all then
        return None
    if not hasattr(_engine, "bpfload"):
        return None
    return [sys.executable, "-m", "tcplab.bpf_loader"]


def available() -> str | None:
    """Why BPF programs cannot be loaded here, or None."""
    if loader() is None:
        named = os.environ.get("TCPLAB_BPFLOAD")
        if named:
            return f"TCPLAB_BPFLOAD names {named}, which is not a file"
        return (
            f"the BPF loader {LOADER} is missing from tcplab's extension module (reinstall tcplab)"
        )
    if not Path("/sys/kernel/btf/vmlinux").is_file():
        return "the kernel has no BTF (/sys/kernel/btf/vmlinux): it cannot load struct_ops"
    return None


def _loader_cmd() -> list[str]:
    found = loader()
    if found is None:
        raise BpfLoadError(available() or "no BPF loader")
    return found


def _refusal(answer: dict, stderr: str = "") -> str:
    log = (answer.get("log") or "").strip()
    return (answer.get("error") or stderr.strip() or f"{LOADER} failed") + (
        "\n" + log[-3000:] if log else ""
    )


def verify(data: bytes) -> str | None:
    """Load an object into the kernel's verifier without registering it: None if it
    passes, else libbpf's account, with the verifier's log naming the program."""
    with tempfile.TemporaryDirectory(prefix="tcplab-verify-") as tmp:
        path = Path(tmp) / "prog.bpf.o"
        path.write_bytes(data)
        try:
            r = subprocess.run(
                [*_loader_cmd(), "verify", str(path)],
                capture_output=True,
                text=True,
                timeout=LOADER_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return f"{LOADER} verify did not finish within {LOADER_TIMEOUT_S:.0f} s"
    try:
        answer = json.loads(r.stdout.splitlines()[0]) if r.stdout.strip() else {}
    except ValueError:
        answer = {}
    if answer.get("ok"):
        return None
    return _refusal(answer, r.stderr).replace(str(path), "the object")


def main(argv: list[str]) -> int:
    """``python -m tcplab.bpf_loader ARGS``: the loader in this process (see the module)."""
    from tcplab.engine import engine  # the extension loads only in the loader's process

    return int(engine().bpfload(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
