"""Reading the kernel's TCP state of a socket: ``TCP_INFO`` (``struct tcp_info``,
include/uapi/linux/tcp.h) and, for BBR, ``TCP_CC_INFO`` (``struct tcp_bbr_info``,
include/uapi/linux/inet_diag.h, filled by ``bbr_get_info`` in net/ipv4/tcp_bbr.c).

Only the fields tcplab records are named; the layout is the kernel's (6.7+: 248 bytes
ending in ``tcpi_total_rto``; an older kernel returns fewer bytes and the missing fields
read as 0).
"""

from __future__ import annotations

import socket
import struct
from typing import Any

TCP_INFO = 11  # include/uapi/linux/tcp.h
TCP_CONGESTION = 13
TCP_NOTSENT_LOWAT = 25
TCP_CC_INFO = 26

# struct tcp_info: 8 x u8, 24 x u32 (tcpi_rto .. tcpi_total_retrans), 4 x u64 (pacing_rate,
# max_pacing_rate, bytes_acked, bytes_received), 6 x u32 (segs_out, segs_in, notsent_bytes,
# min_rtt, data_segs_in, data_segs_out), u64 delivery_rate, 3 x u64 (busy, rwnd_limited,
# sndbuf_limited), 2 x u32 (delivered, delivered_ce), 2 x u64 (bytes_sent, bytes_retrans),
# 6 x u32 (dsack_dups, reord_seen, rcv_ooopack, snd_wnd, rcv_wnd, rehash), 2 x u16
# (total_rto, total_rto_recoveries), u32 total_rto_time.
_INFO = struct.Struct("<8B24I4Q6IQ3Q2I2Q6I2HI")
_NAMES_U8 = ["state", "ca_state", "retransmits", "probes", "backoff", "options", "wscale", "flags"]
_NAMES_U32 = [
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt_us",
    "rttvar_us",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
]
_NAMES_REST = [
    "pacing_rate",
    "max_pacing_rate",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "notsent_bytes",
    "min_rtt_us",
    "data_segs_in",
    "data_segs_out",
    "delivery_rate",
    "busy_time",
    "rwnd_limited",
    "sndbuf_limited",
    "delivered",
    "delivered_ce",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "reord_seen",
    "rcv_ooopack",
    "snd_wnd",
    "rcv_wnd",
    "rehash",
    "total_rto",
    "total_rto_recoveries",
    "total_rto_time",
]
NAMES = _NAMES_U8 + _NAMES_U32 + _NAMES_REST

# include/net/tcp.h / tcp_states.h: icsk_ca_state values, named as the simulator names them.
CA_STATES = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}

# net/ipv4/tcp_bbr.c: BBR_SCALE = 8 (BBR_UNIT = 256); bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1,
# bbr_drain_gain = BBR_UNIT * 1000 / 2885; bbr_update_gains() sets (pacing, cwnd) gains to
# (high, high) in STARTUP, (drain, high) in DRAIN, (cycle gain, 2 * BBR_UNIT) in PROBE_BW and
# (BBR_UNIT, BBR_UNIT) in PROBE_RTT, so the pair names the mode (tcp_bbr_info has no mode field).
BBR_UNIT = 256
BBR_HIGH_GAIN = BBR_UNIT * 2885 // 1000 + 1
BBR_DRAIN_GAIN = BBR_UNIT * 1000 // 2885


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The socket's ``struct tcp_info`` as a dict (fields a shorter kernel lacks are 0)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _INFO.size)
    raw = raw + bytes(_INFO.size - len(raw))
    return dict(zip(NAMES, _INFO.unpack(raw)))


def bbr_info(sock: socket.socket) -> dict[str, int] | None:
    """``struct tcp_bbr_info`` (bw in bytes/s, min_rtt in us, gains in BBR_UNIT) or None
    when the socket's algorithm does not report it."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
    if len(raw) < 20:
        return None
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack("<5I", raw)
    return {
        "bw": (bw_hi << 32) | bw_lo,
        "min_rtt_us": min_rtt,
        "pacing_gain": pacing_gain,
        "cwnd_gain": cwnd_gain,
    }


def bbr_mode(pacing_gain: int, cwnd_gain: int, bw: int = 1) -> str:
    """BBR's mode from its two gains (see the constants above).

    Before the model has its first bandwidth sample (``bw == 0``) the gains are not yet
    set by bbr_update_gains (0 / 0 while the handshake is under way, 1.0 / 1.0 until the
    first ACK of data on Linux 6.18, seen in our runs) and say nothing; BBR is then in
    STARTUP, where bbr_init puts it (bbr_reset_startup_mode)."""
    if bw == 0:
        return "STARTUP"
    if pacing_gain == BBR_HIGH_GAIN:
        return "STARTUP"
    if pacing_gain == BBR_DRAIN_GAIN:
        return "DRAIN"
    if cwnd_gain == BBR_UNIT:
        return "PROBE_RTT"
    return "PROBE_BW"


PACING_UNSET = 2**64 - 1
"""``tcpi_pacing_rate`` before anything set it (net/ipv4/tcp.c tcp_get_info: ``rate !=
~0UL ? rate : ~0ULL``; tcp_init_sock leaves ``sk_pacing_rate`` at ~0UL)."""


def sample(sock: socket.socket, bbr: bool) -> dict[str, Any]:
    """One series row's kernel values for a connected socket."""
    i = tcp_info(sock)
    row: dict[str, Any] = {
        "cwnd_pkts": float(i["snd_cwnd"]),
        # tcp_packets_in_flight(): packets_out - (sacked_out + lost_out) + retrans_out
        "inflight_pkts": float(i["unacked"] - (i["sacked"] + i["lost"]) + i["retrans"]),
        # tcp_get_info() reports an unset sk_pacing_rate (~0UL) as ~0ULL: no rate yet.
        "pacing_rate_bps": (
            float(i["pacing_rate"]) * 8.0 if i["pacing_rate"] != PACING_UNSET else float("nan")
        ),
        # tcpi_rtt is 0 until the first RTT sample: no sample, not a 0 ms RTT.
        "srtt_ms": i["rtt_us"] / 1e3 if i["rtt_us"] else float("nan"),
        "delivery_rate_bps": float(i["delivery_rate"]) * 8.0,
        "ca_state": CA_STATES.get(i["ca_state"], str(i["ca_state"])),
        "bytes_sent": i["bytes_sent"],
        # tcpi_total_retrans also counts retransmitted SYNs and FINs, which carry no data
        # and are not in tcpi_data_segs_out (a flow that barely connected reported a
        # retransmission rate of 1.4); data retransmissions are at most the data
        # segments sent, retransmissions included.
        "total_retrans": min(i["total_retrans"], i["data_segs_out"]),
        "data_segs_out": i["data_segs_out"],
        "total_rto": i["total_rto"],
        # Microseconds new data waited for the receive window (TCP_CHRONO_RWND_LIMITED).
        "rwnd_limited_us": i["rwnd_limited"],
        # Reordering as the sender saw it (kernel >= 5.0 / 4.19): D-SACKed duplicates,
        # tp->reordering and reordering events, as the simulator reports them.
        "dsack_dups": i["dsack_dups"],
        "reordering": i["reordering"],
        "reord_seen": i["reord_seen"],
    }
    if bbr:
        b = bbr_info(sock)
        if b is not None:
            # ~0U: no sample yet; 0 with bw 0: bbr_init has not run (it runs when the
            # handshake completes, tcp_init_transfer), the private area is still zero.
            unset = b["min_rtt_us"] == 0xFFFFFFFF or (b["min_rtt_us"] == 0 and b["bw"] == 0)
            min_rtt = float("nan") if unset else b["min_rtt_us"] / 1e3
            row.update(
                {
                    "cc_bw_bps": b["bw"] * 8.0,
                    "cc_min_rtt_ms": min_rtt,
                    "cc_pacing_gain": b["pacing_gain"] / BBR_UNIT,
                    "cc_cwnd_gain": b["cwnd_gain"] / BBR_UNIT,
                    "cc_mode": bbr_mode(b["pacing_gain"], b["cwnd_gain"], b["bw"]),
                }
            )
    return row
