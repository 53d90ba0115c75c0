"""The BPF loader binary, tcplab-bpfload (crates/bpfload: libbpf 1.7 through libbpf-rs):
where it is, whether it can run here, and its ``verify`` mode, which loads an object into
the kernel's verifier without registering it. The kernel backend registers programs with
it (backends/kernel/bpf_ops.py); tcplab.bpf asks it for the verifier's verdict when a
spec is validated. A leaf, so both may use it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LOADER = "tcplab-bpfload"
REPO = Path(__file__).resolve().parents[2]
LOADER_TIMEOUT_S = 60.0
"""Loading a congestion control takes well under a second; a minute means it hangs."""


class BpfLoadError(RuntimeError):
    """The loader, libbpf or the kernel refused a program; the message has their words."""


def loader() -> str | None:
    """The loader binary: ``$TCPLAB_BPFLOAD``, else ``tcplab-bpfload`` on ``PATH``, else
    the one cargo built in this checkout (release first)."""
    named = os.environ.get("TCPLAB_BPFLOAD")
    if named:
        return named if Path(named).is_file() else None
    found = shutil.which(LOADER)
    if found:
        return found
    for profile in ("release", "debug"):
        built = REPO / "target" / profile / LOADER
        if built.is_file():
            return str(built)
    return None


def available() -> str | None:
    """Why BPF programs cannot be loaded here, or None."""
    if loader() is None:
        return (
            f"the BPF loader {LOADER} is not built (`cargo build --release -p tcplab-bpfload` "
            "in a tcplab checkout, then put it on PATH or name it in TCPLAB_BPFLOAD)"
        )
    if not Path("/sys/kernel/btf/vmlinux").is_file():
        return "the kernel has no BTF (/sys/kernel/btf/vmlinux): it cannot load struct_ops"
    return None


def _loader_cmd() -> str:
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
                [_loader_cmd(), "verify", str(path)],
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
