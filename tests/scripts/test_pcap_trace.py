"""scripts/pcap_trace.py on hand-made captures: retransmissions, RTT samples by Karn's
rule, packet sizes, and a router's queue from its ingress and egress captures."""

from __future__ import annotations

import socket
import struct

import pytest
from script_module import script_module

SND, RCV = "10.0.0.1", "10.0.0.2"


def _mod():
    return script_module("pcap_trace")


def _packet(src, dst, sport, dport, seq, ack, flags, payload):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    total = 20 + len(tcp) + payload
    addrs = socket.inet_aton(src) + socket.inet_aton(dst)
    ip = struct.pack("!BBHHHBBH", 0x45, 0, total, 0, 0, 64, 6, 0) + addrs
    return ip + tcp + b"\0" * payload


def _pcap(path, packets):
    """Classic pcap, microseconds, link type 101 (raw IP)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101)]
    for t, frame in packets:
        sec, usec = int(t), round((t - int(t)) * 1e6)
        out.append(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
    path.write_bytes(b"".join(out))


def data(t, seq, n=100):
    return (t, _packet(SND, RCV, 40000, 5000, seq, 1, 0x10, n))


def ack(t, a):
    return (t, _packet(RCV, SND, 5000, 40000, 1, a, 0x10, 0))


def test_sender_statistics_by_hand(tmp_path):
    # SYN at 0. Segments [1000, 1100) at 1.000 and [1100, 1200) at 1.001; the ACK of 1100 at
    # 1.050 is a 50 ms sample; [1100, 1200) is sent again at 1.060 (a retransmission), so
    # the ACK of 1200 at 1.200 gives no sample (Karn). ACK gap: 150 ms. IP size 140 each.
    cap = tmp_path / "snd.pcap"
    syn = (0.0, _packet(SND, RCV, 40000, 5000, 999, 0, 0x02, 0))
    _pcap(cap, [syn, data(1.0, 1000), data(1.001, 1100), ack(1.05, 1100), data(1.06, 1100), ack(1.2, 1200)])  # fmt: skip
    m = _mod()
    flows, t0 = m.split_flows(m.read_pcap(str(cap)))
    assert t0 == 0.0 and list(flows) == [40000]
    s = m.sender_stats(flows[40000], t0, 0.0, 1e9)
    assert s["data_packets"] == 3
    assert s["ip_sizes"] == {140: 3}
    assert s["retransmissions"] == 1
    assert s["retransmission_times_s"] == [1.06]
    assert s["rtt_ms"]["n"] == 1
    assert s["rtt_ms"]["median"] == pytest.approx(50.0, abs=1e-3)
    assert s["ack_gap_us"]["n"] == 1
    assert s["ack_gap_us"]["median"] == pytest.approx(150_000, abs=1)


def test_queue_from_router_captures_by_hand(tmp_path):
    # In: SYN at 0, segments at 1.0002, 1.0012, 1.0022, 1.0302; out: the first at 1.012, the
    # third at 1.022, the fourth at 1.033; the second never leaves: a drop at 1.0012.
    m = _mod()
    syn = (0.0, _packet(SND, RCV, 40000, 5000, 999, 0, 0x02, 0))
    cin, cout = tmp_path / "in.pcap", tmp_path / "out.pcap"
    _pcap(cin, [syn, data(1.0002, 1000), data(1.0012, 1100), data(1.0022, 1200), data(1.0302, 1300)])  # fmt: skip
    _pcap(cout, [data(1.012, 1000), data(1.022, 1200), data(1.033, 1300)])
    q = m.queue_stats(m.read_pcap(str(cin)), m.read_pcap(str(cout)), 1.0, 2.0)
    # Every 10 ms from 1.0 s up to the last arrival: 1.00 (nothing in yet: 0), 1.01 (3 in,
    # 1 dropped: 2), 1.02 (one out: 1), 1.03 (two out: 0); mean 0.75, max 2.
    assert q["drops"] == 1
    assert q["drop_times_s"] == [1.001]
    assert q["occupancy_pkts"]["max"] == 2
    assert q["occupancy_pkts"]["mean"] == pytest.approx(0.75)


def test_not_a_pcap_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\0" * 40)
    assert _mod().main(["sender", str(bad)]) == 2
    assert "not a classic pcap file" in capsys.readouterr().err


def test_turnaround_counts_the_hosts_immediate_answers_only(tmp_path):
    # Receiver side: [1000, 1100) in at 1.0, its ACK out 4 us later; [1100, 1200) in at
    # 1.001 and ACKed 40 ms later by the delayed-ACK timer (not the host's delay, left
    # out); [1200, 1300) in at 1.05, ACKed 20 us later. Two answers: 4 and 20 us.
    rcv = tmp_path / "rcv.pcap"
    _pcap(rcv, [data(1.0, 1000), ack(1.000004, 1100), data(1.001, 1100), ack(1.041, 1200), data(1.05, 1200), ack(1.05002, 1300)])  # fmt: skip
    r = _mod().turnaround(_mod().read_pcap(str(rcv)), "receiver")
    assert r["answers"] == 2
    assert r["mean_us"] == pytest.approx(12.0, abs=0.01)
    assert (r["p10_us"], r["p50_us"]) == (
        pytest.approx(4.0, abs=0.01),
        pytest.approx(20.0, abs=0.01),
    )
    # Sender side: an ACK in at 2.0 answered by data 3 us later; one at 2.1 whose data
    # waited 10 ms (pacing, not the host) is left out.
    snd = tmp_path / "snd.pcap"
    _pcap(snd, [ack(2.0, 1300), data(2.000003, 1300), ack(2.1, 1400), data(2.11, 1400)])
    s = _mod().turnaround(_mod().read_pcap(str(snd)), "sender")
    assert s["answers"] == 1 and s["mean_us"] == pytest.approx(3.0, abs=0.01)
