"""The kernel backend's latency probes ([[probes]], tcplab.specs.probes): iputils ``ping``
in the sender's namespace to the receiver's address, whose echoes the emulator carries
over the probe's own links (crates/emu: ICMP identifier ``base_port + probe``), parsed
into the simulator's probe report (crates/sim/src/probe.rs ``ProbeReport``).

Mapping: ``interval`` -> ``-i`` (seconds), ``size`` -> ``-s size - 28`` (ping's
``-s`` counts ICMP data bytes; 20 IPv4 + 8 ICMP header bytes make the wire size the spec
names), the probe's index -> ``-e base_port + i`` (the identifier the emulator routes
by), ``-c`` the probes due in ``[start, stop)``; ping is started at ``start`` and
interrupted (SIGINT, so it prints its totals) at the run's end. Each reply line's
``icmp_seq`` (from 1) and ``time=`` become a row: the request was due at ``start +
(icmp_seq - 1) x interval``, the time the simulator records (ping sends on that
schedule, late by its own start-up); its RTT is ping's own measurement (``time=``: to
0.01 ms below 10 ms, 0.1 ms below 100 ms, 1 ms above). ``sent_packets`` is ping's "transmitted",
``echoed_packets`` its "received"; ``dropped_packets`` and ``in_flight_packets_at_end``
are the emulator's counts (a reply that was in flight at the end is lost to ping).

Deviations: ping measures in the sender's host (its own send and receive paths are in
the RTT, as for a real ping), the simulator at the packet's send and echo times; ping
needs 16 data bytes to carry its timestamp, so the kernel backend refuses sizes below 44
bytes (support.py).
"""

from __future__ import annotations

import math
import re
from typing import Any

ICMP_IP_HEADER = 28  # 20 IPv4 + 8 ICMP: ping's -s counts the data after them
MIN_TIMED_SIZE = ICMP_IP_HEADER + 16  # ping stamps its send time in 16 data bytes
_REPLY = re.compile(r"icmp_seq=(\d+)\b.*?\btime=([0-9.]+) ms")
_TOTALS = re.compile(r"(\d+) packets transmitted, (\d+) received")


def due(probe: dict[str, Any], duration_ns: int) -> int:
    """Probes due in [start, stop): the engine's count (probe.rs ``send``)."""
    stop = min(int(probe.get("stop_ns") or duration_ns), duration_ns)
    return max(0, math.ceil((stop - int(probe["start_ns"])) / int(probe["interval_ns"])))


def command(
    probe: dict[str, Any], i: int, duration_ns: int, addr: str, base_port: int
) -> list[str]:
    """ping's argv for probe ``i`` (the engine config's ``probes[i]``)."""
    return [
        "ping",
        "-n",  # numeric: no DNS lookup per reply
        "-i",
        f"{int(probe['interval_ns']) / 1e9:.6f}",
        "-s",
        str(int(probe["packet_bytes"]) - ICMP_IP_HEADER),
        "-e",
        str(base_port + i),
        "-c",
        str(due(probe, duration_ns)),
        addr,
    ]


def parse(text: str, probe: dict[str, Any]) -> dict[str, Any]:
    """ping's output as the rows and totals of a probe report (see the module doc)."""
    seq, sent, rtt = [], [], []
    for line in text.splitlines():
        m = _REPLY.search(line)
        if m is None:
            continue
        k = int(m.group(1)) - 1
        seq.append(k)
        sent.append(int(probe["start_ns"]) + k * int(probe["interval_ns"]))
        rtt.append(round(float(m.group(2)) * 1e6))
    totals = _TOTALS.search(text)
    transmitted = int(totals.group(1)) if totals else max(seq, default=-1) + 1
    received = int(totals.group(2)) if totals else len(seq)
    return {
        "seq": seq,
        "sent_ns": sent,
        "rtt_ns": rtt,
        "sent_packets": transmitted,
        "echoed_packets": received,
    }


def reports(
    probes: list[dict[str, Any]], outputs: list[str], emu_probes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The run's ``probes`` in the engine's form: ping's rows and totals, the emulator's
    drops and packets in flight."""
    out = []
    for i, (probe, text) in enumerate(zip(probes, outputs)):
        p = parse(text, probe)
        emu = emu_probes[i] if i < len(emu_probes) else {}
        lost = max(0, p["sent_packets"] - p["echoed_packets"])
        dropped = min(int(emu.get("dropped_packets", lost)), lost)
        out.append(
            {
                "interval_ns": int(probe["interval_ns"]),
                "packet_bytes": int(probe["packet_bytes"]),
                "start_ns": int(probe["start_ns"]),
                "stop_ns": int(probe.get("stop_ns") or 0),
                "reached_packets": int(emu.get("reached_packets", 0)),
                "dropped_packets": dropped,
                "in_flight_packets_at_end": lost - dropped,
                **p,
            }
        )
    return out
