"""What the kernel backend needs from this machine, checked before a run and listed by
``tcplab doctor``: root (CAP_NET_ADMIN, to create namespaces and TUN devices), network
namespaces, ``/dev/net/tun``, ``ip`` (iproute2), the emulator binary and the kernel's
congestion-control algorithms (``net.ipv4.tcp_available_congestion_control``)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tcplab.engine import engine

AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


@dataclass
class Requirement:
    name: str
    ok: bool
    detail: str


def available_cc() -> list[str]:
    """The algorithms the running kernel offers (loaded modules and built-ins)."""
    try:
        return AVAILABLE_CC.read_text().split()
    except OSError:
        return []


def emulator_command() -> list[str] | None:
    """How to start the link emulator: ``TCPLAB_EMU`` (a ``tcplab-emu`` binary, e.g. one
    built with ``cargo build --release -p tcplab-emu``), else the emulator inside the
    compiled extension (:mod:`.emulator`); None if neither is there."""
    env = os.environ.get("TCPLAB_EMU")
    if env:
        return [env] if Path(env).is_file() else None
    try:
        if hasattr(engine(), "emulate"):
            return [sys.executable, "-m", "tcplab.backends.kernel.emulator"]
    except RuntimeError:
        pass
    return None


def check() -> list[Requirement]:
    """Every requirement with whether it is met and what was found."""
    out = []
    root = os.geteuid() == 0
    out.append(
        Requirement(
            "root",
            root,
            "running as root"
            if root
            else f"running as uid {os.geteuid()}; the kernel backend needs root (CAP_NET_ADMIN)",
        )
    )
    netns = Path("/proc/self/ns/net").exists()
    out.append(
        Requirement(
            "netns",
            netns,
            "network namespaces supported"
            if netns
            else "/proc/self/ns/net missing: the kernel lacks network namespaces",
        )
    )
    tun = Path("/dev/net/tun").exists()
    out.append(
        Requirement(
            "tun", tun, "/dev/net/tun present" if tun else "/dev/net/tun missing (modprobe tun)"
        )
    )
    ip = shutil.which("ip")
    out.append(
        Requirement(
            "ip", ip is not None, ip or "the 'ip' command (Debian package iproute2) is missing"
        )
    )
    emu = emulator_command()
    out.append(
        Requirement(
            "emulator",
            emu is not None,
            " ".join(emu)
            if emu
            else "no link emulator: TCPLAB_EMU names no file, or the extension lacks it "
            "(reinstall tcplab)",
        )
    )
    out += bpf_requirements()
    cc = available_cc()
    out.append(
        Requirement(
            "congestion control", bool(cc), " ".join(cc) if cc else f"{AVAILABLE_CC} unreadable"
        )
    )
    return out


def bpf_requirements() -> list[Requirement]:
    """What BPF needs, in two parts: the loader (in the extension module) and a kernel
    with BTF, for ``bpf:`` and ``policy:`` flows on the kernel backend; clang and
    libbpf's headers, to compile a ``bpf:`` flow's source (on either backend)."""
    from tcplab import bpf, bpf_loader  # base layer; imported here as doctor alone needs it

    why = bpf_loader.available()
    loader = " ".join(bpf_loader.loader() or [])
    lacking = bpf.compiler_missing()
    shipped = ", ".join(bpf.example_names())
    return [
        Requirement(
            "bpf loader",
            why is None,
            f"{loader}, kernel BTF present (bpf: and policy: flows on the kernel)"
            if why is None
            else f"{why}; only bpf: and policy: flows on the kernel need this",
        ),
        Requirement(
            "bpf compiler",
            not lacking,
            "clang and libbpf's headers present (bpf: sources compile)"
            if not lacking
            else f"{lacking} missing (apt-get install clang libbpf-dev): a bpf: flow's own "
            f"source cannot be compiled; the shipped examples ({shipped}) run from the "
            "objects the wheel carries, where it carries them",
        ),
    ]


BPF_REQUIREMENTS = ("bpf loader", "bpf compiler")


def missing() -> list[Requirement]:
    """The unmet requirements that stop a run (the emulator is built on demand)."""
    return [
        r for r in check() if not r.ok and r.name != "emulator" and r.name not in BPF_REQUIREMENTS
    ]
