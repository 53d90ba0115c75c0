#!/usr/bin/env python3
"""Packet-level statistics of a kernel run's captures, to compare the two kernel
instruments (the kernel backend's TUN emulator and scripts/veth_testbed.py;
docs/FIDELITY-instruments.md).

    python scripts/pcap_trace.py sender SENDER.pcap [--from S] [--to S]
    python scripts/pcap_trace.py queue ROUTER_IN.pcap ROUTER_OUT.pcap [--from S] [--to S]
    python scripts/pcap_trace.py turnaround HOST.pcap --side receiver|sender

``sender``: a capture at the senders (``tcpdump -s 128 -w F`` in the sender namespace).
Per flow (a sender port), with times in s from the first SYN: data packets and their IP
sizes, retransmissions (a data segment whose start is below the highest sequence sent
before it) with their times, RTT samples (an ACK that advances the cumulative ACK, timed
from the first transmission of the newest segment it covers, none from retransmitted
data: Karn), the gaps between a flow's ACKs (how they reach the sender: a delay line
that releases ACKs in batches shows as gaps under 50 us) and between its data packets
(pacing).

``queue``: two captures of one router, its ingress (data from the senders) and its
egress after the bottleneck qdisc (tcpdump sees a packet when the driver sends it, after
the qdisc); a data packet seen on the way in and never on the way out was dropped at the
qdisc. Prints the queue's occupancy (in - out - dropped) every 10 ms as summary
statistics and the drop times.

``turnaround``: a host's own delay, from a capture on its namespace's TUN device (the
kernel backend: ``tcpdump -i tcplab<pid>r`` in ``tcplab-<pid>-rcv``, ``...s`` in
``-snd``), where the emulator's writes show as packets in and the kernel's answers as
packets out. ``--side receiver``: from a data segment's arrival to the ACK of exactly its
end; ``--side sender``: from an ACK's arrival to the flow's next data segment. Only
answers within ``TURNAROUND_LIMIT_S`` count (an ACK the delayed-ACK timer sent, or data
that waited for pacing, is not the host's delay). Prints per side the count, mean and
percentiles in microseconds (docs/FIDELITY.md finding 41: what the simulator, whose hosts
answer in zero time, leaves out).

Reads classic pcap (microsecond or nanosecond) with link types Ethernet (1), raw IP
(101), Linux cooked (113) and cooked v2 (276), IPv4/TCP only; stdlib only. Exit 2 with a
message on a bad file.
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import struct
import sys
from collections import defaultdict
from dataclasses import dataclass, field

LINK_OFFSET = {1: 14, 101: 0, 113: 16, 276: 20}
SMALL_GAP_S = 50e-6  # ACKs closer than this arrived in one batch


@dataclass
class Pkt:
    t: float
    src: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    ip_len: int
    payload: int
    tsval: int | None


def read_pcap(path: str) -> list[Pkt]:
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        raise ValueError(f"{path}: not a classic pcap file (magic {magic:#x}); use tcpdump -w")
    nano = struct.unpack_from(end + "I", data, 0)[0] == 0xA1B23C4D
    linktype = struct.unpack_from(end + "I", data, 20)[0]
    if linktype not in LINK_OFFSET:
        raise ValueError(f"{path}: link type {linktype} not read (1, 101, 113, 276)")
    off0 = LINK_OFFSET[linktype]
    out = []
    at = 24
    while at + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from(end + "IIII", data, at)
        at += 16
        frame = data[at : at + incl]
        at += incl
        ip = frame[off0:]
        if len(ip) < 40 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        ip_len = struct.unpack_from("!H", ip, 2)[0]
        tcp = ip[ihl:]
        if len(tcp) < 20:
            continue
        sport, dport, seq, ack = struct.unpack_from("!HHII", tcp, 0)
        doff = (tcp[12] >> 4) * 4
        tsval = _tsval(tcp[20:doff])
        t = sec + frac * (1e-9 if nano else 1e-6)
        src = ".".join(str(b) for b in ip[12:16])
        out.append(Pkt(t, src, sport, dport, seq, ack, tcp[13], ip_len, ip_len - ihl - doff, tsval))
    return out


def _tsval(opts: bytes) -> int | None:
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if kind == 8 and opts[i + 1] == 10 and i + 6 <= len(opts):
            return struct.unpack_from("!I", opts, i + 2)[0]
        i += opts[i + 1]
    return None


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


@dataclass
class FlowTrace:
    port: int
    data: list[Pkt] = field(default_factory=list)
    acks: list[Pkt] = field(default_factory=list)


def split_flows(pkts: list[Pkt]) -> tuple[dict[int, FlowTrace], float]:
    """Per sender port (the side that sends payload), and time zero (the first SYN)."""
    syn = [p.t for p in pkts if p.flags & 0x02]
    t0 = min(syn) if syn else (pkts[0].t if pkts else 0.0)
    senders = {(p.src, p.sport) for p in pkts if p.payload > 0}
    flows: dict[int, FlowTrace] = {}
    for p in pkts:
        if (p.src, p.sport) in senders:
            flows.setdefault(p.sport, FlowTrace(p.sport)).data.append(p)
        elif p.payload == 0 and p.flags & 0x10:
            flows.setdefault(p.dport, FlowTrace(p.dport)).acks.append(p)
    return flows, t0


def _u32(x: int, base: int) -> int:
    """Sequence number ``x`` unwrapped relative to ``base``."""
    return (x - base) % (1 << 32)


def sender_stats(f: FlowTrace, t0: float, lo: float, hi: float) -> dict:
    data = [p for p in f.data if p.payload > 0]
    if not data:
        return {"port": f.port, "data_packets": 0}
    isn = data[0].seq
    sent_first: dict[int, float] = {}  # segment end -> first transmission time
    retx_ends: set[int] = set()
    high = 0
    retx_times = []
    sizes: dict[int, int] = defaultdict(int)
    gaps = []
    last = None
    for p in data:
        s = _u32(p.seq, isn)
        e = s + p.payload
        if s < high:
            retx_times.append(p.t - t0)
            retx_ends.add(e)
        else:
            sent_first.setdefault(e, p.t)
        high = max(high, e)
        if lo <= p.t - t0 < hi:
            sizes[p.ip_len] += 1
            if last is not None:
                gaps.append(p.t - last)
            last = p.t
    ends = sorted(sent_first)
    rtts = []
    una = 0
    ack_gaps = []
    last_ack = None
    for a in f.acks:
        if not a.flags & 0x10:
            continue
        ack = _u32(a.ack, isn)
        if ack > (1 << 31):
            continue
        if lo <= a.t - t0 < hi:
            if last_ack is not None:
                ack_gaps.append(a.t - last_ack)
            last_ack = a.t
        if ack > una:
            i = bisect.bisect_right(ends, ack) - 1
            if i >= 0 and ends[i] > una and ends[i] not in retx_ends and lo <= a.t - t0 < hi:
                rtts.append(a.t - sent_first[ends[i]])
            una = ack
    in_window = [t for t in retx_times if lo <= t < hi]
    return {
        "port": f.port,
        "data_packets": sum(sizes.values()),
        "ip_sizes": dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:4]),
        "retransmissions": len(in_window),
        "retransmissions_first_2s": sum(1 for t in retx_times if t < 2.0),
        "retransmission_times_s": [round(t, 3) for t in in_window],
        "rtt_ms": {
            "n": len(rtts),
            "p10": 1e3 * pct(rtts, 0.1),
            "median": 1e3 * pct(rtts, 0.5),
            "p90": 1e3 * pct(rtts, 0.9),
            "min": 1e3 * min(rtts) if rtts else float("nan"),
        },
        "ack_gap_us": {
            "n": len(ack_gaps),
            "median": 1e6 * pct(ack_gaps, 0.5),
            "p90": 1e6 * pct(ack_gaps, 0.9),
            "under_50us": sum(1 for g in ack_gaps if g < SMALL_GAP_S) / max(1, len(ack_gaps)),
        },
        "data_gap_us": {
            "median": 1e6 * pct(gaps, 0.5),
            "p10": 1e6 * pct(gaps, 0.1),
            "under_50us": sum(1 for g in gaps if g < SMALL_GAP_S) / max(1, len(gaps)),
        },
    }


def queue_stats(pin: list[Pkt], pout: list[Pkt], lo: float, hi: float, step: float = 0.01):
    """Occupancy of the qdisc between a router's ingress and egress captures."""

    def key(p: Pkt) -> tuple:
        return (p.sport, p.seq, p.tsval, p.payload)

    syn = [p.t for p in pin if p.flags & 0x02]
    t0 = min(syn) if syn else pin[0].t
    data_in = [p for p in pin if p.payload > 0]
    out_keys = {key(p) for p in pout if p.payload > 0}
    out_times = sorted(p.t for p in pout if p.payload > 0)
    drops = [p.t for p in data_in if key(p) not in out_keys]
    in_times = sorted(p.t for p in data_in)
    samples = []
    t = t0 + lo
    while t < t0 + hi and t <= (in_times[-1] if in_times else t0):
        n = (
            bisect.bisect_right(in_times, t)
            - bisect.bisect_right(out_times, t)
            - bisect.bisect_right(drops, t)
        )
        samples.append(n)
        t += step
    win = [d - t0 for d in drops if lo <= d - t0 < hi]
    return {
        "occupancy_pkts": {
            "mean": statistics.fmean(samples) if samples else float("nan"),
            "p10": pct(samples, 0.1),
            "median": pct(samples, 0.5),
            "max": max(samples) if samples else 0,
        },
        "drops": len(win),
        "drop_times_s": [round(x, 3) for x in win],
    }


TURNAROUND_LIMIT_S = 2e-3


def turnaround(pkts: list[Pkt], side: str) -> dict:
    """The host's answer delays (s) on ``side`` of a capture of its own device: the
    packets it sends are from the flows' local ports (receiver: 5000-5999, the kernel
    backend's; sender: the rest)."""
    waiting: dict[tuple[int, int], float] = {}
    delays = []
    for p in pkts:
        served = 5000 <= p.sport < 6000  # sent by the receiver
        if side == "receiver":
            if not served and p.payload > 0:
                waiting[(p.dport, (p.seq + p.payload) % (1 << 32))] = p.t
            elif served and p.payload == 0 and p.flags & 0x10:
                t_in = waiting.pop((p.sport, p.ack), None)
                if t_in is not None and p.t - t_in <= TURNAROUND_LIMIT_S:
                    delays.append(p.t - t_in)
        else:
            if served and p.payload == 0 and p.flags & 0x10:
                waiting.setdefault((p.sport, 0), p.t)
            elif not served and p.payload > 0:
                t_in = waiting.pop((p.dport, 0), None)
                if t_in is not None and p.t - t_in <= TURNAROUND_LIMIT_S:
                    delays.append(p.t - t_in)
    us = [d * 1e6 for d in delays]
    return {
        "side": side,
        "answers": len(us),
        "mean_us": statistics.fmean(us) if us else float("nan"),
        **{f"p{int(q * 100)}_us": pct(us, q) for q in (0.1, 0.5, 0.9, 0.99)},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("sender", "queue", "turnaround"))
    ap.add_argument("pcaps", nargs="+")
    ap.add_argument("--from", dest="lo", type=float, default=0.0, help="s after the first SYN")
    ap.add_argument("--to", dest="hi", type=float, default=1e9)
    ap.add_argument("--side", choices=("receiver", "sender"), default="receiver")
    a = ap.parse_args(argv)
    import json

    try:
        caps = [read_pcap(p) for p in a.pcaps]
    except (OSError, ValueError) as exc:
        print(f"pcap_trace: {exc}", file=sys.stderr)
        return 2
    if a.mode == "turnaround":
        print(json.dumps(turnaround(caps[0], a.side)))
    elif a.mode == "sender":
        flows, t0 = split_flows(caps[0])
        for port in sorted(flows):
            print(json.dumps(sender_stats(flows[port], t0, a.lo, a.hi)))
    else:
        if len(caps) != 2:
            print("pcap_trace: queue takes two captures, IN and OUT", file=sys.stderr)
            return 2
        print(json.dumps(queue_stats(caps[0], caps[1], a.lo, a.hi)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
