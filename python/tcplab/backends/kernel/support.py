"""What of a spec the kernel backend runs, and what it refuses.

The emulator (crates/emu) forwards real packets over the simulator's dumbbell: per-flow
access links, the drop-tail bottleneck, random loss, jitter and reordering (the links'
netem fields, the same code as the simulator's) and the bottleneck's [[events]]. The
simulator's later network features are not wired into it yet, and ECN is not negotiated
by the agents; a spec asking for them is refused (exit 2, the field named) rather than run
without them, so that a kernel run never silently differs from its simulated twin.
"""

from __future__ import annotations

from typing import Any

from tcplab.specs.model import Spec
from tcplab.specs.traces import TraceRate

WHY = "is not supported by the kernel backend yet (the emulator runs the dumbbell's drop-tail links only)"


def _link_problems(at: str, link: Any) -> list[tuple[str, str]]:
    out = []
    if link is None:
        return out
    if isinstance(getattr(link, "rate", None), TraceRate):
        out.append((f"{at}.rate", f"a trace-driven rate {WHY}"))
    if getattr(link, "policer", None) is not None:
        out.append((f"{at}.policer", f"a policer {WHY}"))
    return out


def unsupported(spec: Spec) -> list[tuple[str, str]]:
    """(field, reason) for every feature of ``spec`` the kernel backend cannot run."""
    p: list[tuple[str, str]] = []
    b = spec.bottleneck
    if spec.tcp.kernel != "6.18":
        p.append(
            (
                "tcp.kernel",
                f'"{spec.tcp.kernel}" is a simulator profile of an old tcp_bbr.c; the kernel '
                'backend runs the host\'s own kernel: use "6.18" (the default)',
            )
        )
    if spec.tcp.ecn:
        p.append(("tcp.ecn", "ECN is not negotiated by the kernel backend's agents yet"))
    if spec.tcp.receive_buffer != "linux":
        p.append(
            (
                "tcp.receive_buffer",
                '"unlimited" is a simulator model; the kernel backend always '
                "runs Linux's own autotuned receive buffer",
            )
        )
    if not spec.tcp.handshake:
        p.append(
            (
                "tcp.handshake",
                "false is a simulator model; a kernel connection always starts with its "
                "handshake (use true, the default)",
            )
        )
    if spec.tcp.rcv_truesize is not None:
        p.append(
            (
                "tcp.rcv_truesize",
                "the kernel backend's skb truesize is set by its devices, not by the spec",
            )
        )
    if b.aqm is not None:
        p.append(("bottleneck.aqm", f"a queue discipline {WHY}"))
    if b.reverse is not None:
        p.append(("bottleneck.reverse", f"a separately configured ACK direction {WHY}"))
    p += _link_problems("bottleneck", b)
    if spec.experiment.pcap:
        p.append(
            (
                "experiment.pcap",
                "packet captures are written by the simulator only, not by the kernel backend",
            )
        )
    if spec.links:
        p.append(("links", f"named links and per-flow paths {WHY}"))
    if spec.sources:
        p.append(("sources", "constant-rate sources are not supported by the kernel backend yet"))
    for i, f in enumerate(spec.flows):
        if f.params.get("kernel", 618) not in (618, "6.18"):
            p.append(
                (
                    f"flows[{i}].params.kernel",
                    "an old tcp_bbr.c profile is simulator-only; the kernel backend runs "
                    "the host's own kernel (618)",
                )
            )
        if f.ecn:
            p.append(
                (f"flows[{i}].ecn", "ECN is not negotiated by the kernel backend's agents yet")
            )
        if f.onoff is not None:
            p.append(
                (
                    f"flows[{i}].onoff",
                    "on/off applications are not supported by the kernel backend yet",
                )
            )
        if f.path is not None:
            p.append((f"flows[{i}].path", f"per-flow paths {WHY}"))
        p += _link_problems(f"flows[{i}].access", f.access)
        p += _link_problems(f"flows[{i}].receiver_access", f.receiver_access)
    return p
