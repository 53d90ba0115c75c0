"""What of a spec the kernel backend runs, and what it refuses.

The emulator (crates/emu) forwards real packets over the simulator's dumbbell: per-flow
access links, the bottleneck with its queue discipline (``bottleneck.aqm``: the
simulator's own qdiscs, whose CE marks are written into the real packets), random loss,
jitter and reordering (the links' netem fields), trace-driven rates and policers on any
of its links (the simulator's ``shaping``), the bottleneck's separately configured ACK
direction (``bottleneck.reverse``), named links and per-flow paths (``links``,
``flows[i].path``: the simulator's ``net::topology``), constant-rate sources (``sources``:
the simulator's ``Source`` run inside the emulator, their packets model-only, as the
simulator's have no host stack either), latency probes (``probes``: iputils ping from
the sender's namespace over the probe's emulated links, ping.py; at least 44 bytes, so
ping can time them), the bottleneck's [[events]], and trained
policies (``cc = "policy:FILE"``: policy_agent.py and its BPF program). ECN is
negotiated by the namespaces' ``net.ipv4.tcp_ecn``, or per flow by the flow's route when
flows differ (``features ecn``: run.ecn_ports, netns.Pair.commands), and on/off flows
stop writing during their off periods (run.py, agent.py). What it cannot run (a
packet capture; the simulator's models of things a real kernel does its own way; a
``preset:`` file's Python) is
refused (exit 2, the field named) rather than run without it, so that a kernel run never
silently differs from its simulated twin.
"""

from __future__ import annotations

import shutil

from tcplab import preset_file
from tcplab.backends.kernel.ping import MIN_TIMED_SIZE
from tcplab.specs.model import Spec


def unsupported(spec: Spec) -> list[tuple[str, str]]:
    """(field, reason) for every feature of ``spec`` the kernel backend cannot run."""
    p: list[tuple[str, str]] = []
    if spec.tcp.kernel != "6.18":
        p.append(
            (
                "tcp.kernel",
                f'"{spec.tcp.kernel}" is a simulator profile of an old tcp_bbr.c; the kernel '
                'backend runs the host\'s own kernel: use "6.18" (the default)',
            )
        )
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
    if spec.experiment.pcap:
        p.append(
            (
                "experiment.pcap",
                "packet captures are written by the simulator only, not by the kernel backend",
            )
        )
    p += preset_file.refuse(spec, preset_file.KERNEL_REFUSES)
    for i, f in enumerate(spec.flows):
        if f.params.get("kernel", 618) not in (618, "6.18"):
            p.append(
                (
                    f"flows[{i}].params.kernel",
                    "an old tcp_bbr.c profile is simulator-only; the kernel backend runs "
                    "the host's own kernel (618)",
                )
            )
    for i, pr in enumerate(spec.probes):
        if pr.size.unit == "bytes" and pr.size.value < MIN_TIMED_SIZE:
            p.append(
                (
                    f"probes[{i}].size",
                    f"at least {MIN_TIMED_SIZE}B on the kernel backend: ping carries its send "
                    "time in 16 data bytes after the 28 bytes of IPv4 and ICMP headers",
                )
            )
    if spec.probes and shutil.which("ping") is None:
        p.append(("probes", "iputils ping is not installed (apt-get install iputils-ping)"))
    return p
