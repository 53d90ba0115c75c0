"""pcap output (tcplab.storage.pcap, crates/sim/src/net/capture.rs) read back with scapy, a real
reader: packet counts, sequence numbers and SACK blocks against the run's exact counters."""

import json

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.specs.load import parse_spec, tomllib

scapy_all = pytest.importorskip("scapy.all")

SPEC = """
[experiment]
duration = "10s"
pcap = ["flow0.sender_access", "bottleneck", "bottleneck_reverse"]

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "10pkt"

[[flows]]
cc = "cubic"
rtt = "20ms"
size = "2000000B"
"""


@pytest.mark.engine
def test_pcap_matches_the_run_counters(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SPEC)
    r = tcplab.run(p, tmp_path / "run", report=False)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert {"flow0.sender_access.pcap", "bottleneck.pcap", "bottleneck_reverse.pcap"} <= set(
        manifest["sha256"]
    )
    flow = r.run.flows.iloc[0]
    queues = {q["name"]: q for q in r.run.queues}

    def tcp_packets(name):
        return [
            pkt
            for pkt in scapy_all.rdpcap(str(tmp_path / "run" / f"{name}.pcap"))
            if pkt.haslayer("TCP")
        ]

    # The sender's access link (unlimited, lossless): a 2 MB transfer that completes in 10 s
    # has every transmission on it, each once: sent_packets frames, of which
    # retransmitted_packets repeat an earlier sequence number.
    sent = tcp_packets("flow0.sender_access")
    assert len(sent) == flow["sent_packets"]
    seqs = [pkt["TCP"].seq for pkt in sent]
    assert len(seqs) - len(set(seqs)) == flow["retransmitted_packets"]
    assert flow["retransmitted_packets"] > 0  # a 10-packet buffer: the check is not vacuous
    # Bytes: the highest segment ends at the transfer size (2 000 000 bytes from ISN 0).
    assert max(pkt["TCP"].seq + pkt["IP"].len - 40 for pkt in sent) == 2_000_000
    # The bottleneck carries what left its queue: the engine's departed count.
    assert len(tcp_packets("bottleneck")) == queues["bottleneck"]["departed"]
    # The last ACK on the reverse path acknowledges the whole transfer.
    acks = tcp_packets("bottleneck_reverse")
    assert len(acks) == queues["bottleneck_reverse"]["departed"]
    assert acks[-1]["TCP"].ack == 2_000_000
    # Losses leave SACK blocks (RFC 2018 option kind 5) whose edges are segment boundaries.
    sacks = [o for pkt in acks for o in pkt["TCP"].options if o[0] == "SAck"]
    assert sacks and all(edge % 1448 == 0 or edge == 2_000_000 for o in sacks for edge in o[1])
    # Addresses are per flow: sender 10.1.0.1 -> receiver 10.2.0.1.
    assert (sent[0]["IP"].src, sent[0]["IP"].dst) == ("10.1.0.1", "10.2.0.1")
    # The ACKs carry the receiver's window in 1024-byte units (its window scale, 10).
    # The handshake offers 45 segments (65160 bytes, tcp_select_initial_window for an
    # MSS of 1448) and each early segment grows the offer by two (tcp_grow_window), so
    # the first ACK offers 63-72 units (the offer less the byte it acknowledges, up to
    # four segments' growth); autotuning then at least doubles it over the transfer.
    windows = [pkt["TCP"].window for pkt in acks]
    assert 63 <= windows[0] <= 72, windows[:5]
    assert max(windows) >= 2 * windows[0], max(windows)


def test_pcap_names_links():
    spec = tomllib.loads(SPEC.replace('"bottleneck_reverse"]', '"flow1.receiver_access"]'))
    with pytest.raises(SpecError) as e:
        parse_spec(spec)
    assert "no link 'flow1.receiver_access'" in dict(e.value.problems)["experiment.pcap[2]"]
