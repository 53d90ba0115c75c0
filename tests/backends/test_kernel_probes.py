"""[[probes]] on the kernel backend (backends/kernel/ping.py, crates/emu): iputils ping
from the sender's namespace, its echoes carried over the probe's emulated links. The
runs need root, network namespaces, /dev/net/tun, ip and ping; elsewhere they are skipped
with the reason. The parsing tests run everywhere."""

from __future__ import annotations

import json
import shutil

import pytest
import tcplab
from tcplab.backends.kernel import ping, requirements

_missing = [r.detail for r in requirements.missing()]
if shutil.which("ping") is None:
    _missing.append("iputils ping not installed (apt-get install iputils-ping)")
needs_kernel = pytest.mark.skipif(
    bool(_missing), reason="kernel backend unavailable here: " + "; ".join(_missing)
)

PROBE = {"interval_ns": 200_000_000, "packet_bytes": 84, "start_ns": 1_000_000_000}

OUTPUT = """PING 10.201.1.1 (10.201.1.1) 56(84) bytes of data.
64 bytes from 10.201.1.1: icmp_seq=1 ttl=64 time=40.2 ms
64 bytes from 10.201.1.1: icmp_seq=3 ttl=64 time=71.3 ms

--- 10.201.1.1 ping statistics ---
3 packets transmitted, 2 received, 33.3333% packet loss, time 402ms
"""


def test_pings_command_maps_interval_size_identifier_and_count():
    # 84-byte packets are ping's -s 56 (84 - 20 IPv4 - 8 ICMP); identifier 5000 + 2 for
    # probe 2; probes due in [1 s, 10 s) every 200 ms: 45.
    argv = ping.command(PROBE, 2, 10_000_000_000, "10.201.1.1", 5000)
    assert argv == [
        "ping",
        "-n",
        "-i",
        "0.200000",
        "-s",
        "56",
        "-e",
        "5002",
        "-c",
        "45",
        "10.201.1.1",
    ]


def test_pings_replies_become_rows_at_their_due_times():
    # icmp_seq counts from 1: seq 1 was due at the start (1 s), seq 3 at 1.4 s; seq 2 lost.
    p = ping.parse(OUTPUT, PROBE)
    assert p["seq"] == [0, 2]
    assert p["sent_ns"] == [1_000_000_000, 1_400_000_000]
    assert p["rtt_ns"] == [40_200_000, 71_300_000]
    assert (p["sent_packets"], p["echoed_packets"]) == (3, 2)
    (r,) = ping.reports([{**PROBE, "stop_ns": 10**10}], [OUTPUT], [{"dropped_packets": 1}])
    assert (r["dropped_packets"], r["in_flight_packets_at_end"]) == (1, 0)
    # Killed before its totals: what the replies say.
    p = ping.parse(OUTPUT.split("\n---")[0], PROBE)
    assert (p["sent_packets"], p["echoed_packets"]) == (3, 2)


def test_a_probe_too_small_for_pings_timestamp_is_refused_on_the_kernel():
    from tcplab.backends.kernel.support import unsupported
    from tcplab.specs.load import parse_spec

    spec = parse_spec(
        {
            "experiment": {"duration": "1s"},
            "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
            "probes": [{"size": "40B"}],
        }
    )
    assert any(f == "probes[0].size" and "44B" in why for f, why in unsupported(spec))


@needs_kernel
@pytest.mark.engine
def test_beside_cubic_on_the_kernel_ping_sees_the_standing_queue(tmp_path):
    # The kernel twin of tests/specs/test_probes.py's CUBIC case, shortened to 8 s (runs
    # here share the machine): 10 Mbit/s, 40 ms, 1 BDP buffer; ping every 100 ms from 3 s
    # (after slow start). Hand-derived as there: the standing queue of CUBIC's sawtooth is
    # 0.4-1 BDP (16-40 ms), so the median ping exceeds the base RTT (40.1 ms with the 84-byte
    # serialisation) by 16 ms to 41.2 ms, plus up to 2 ms of the hosts' own stacks and the
    # emulator's wake-ups.
    spec = {
        "experiment": {"duration": "8s", "backend": "kernel"},
        "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms"}],
        "probes": [{"name": "ping", "interval": "100ms", "rtt": "40ms", "start": "3s"}],
    }
    r = tcplab.run(spec, tmp_path / "k", report=False)
    (s,) = r.summary_json["probes"]
    assert s["count"] >= 45 and s["echoed"] >= 40, s
    base = 40 + 2 * 672 / 10e6 * 1e3
    assert 16.0 <= s["median_ms"] - base <= 41.2 + 2.0, s
    # No echo beats the path (within 0.5 ms). Up to 0.10.0 the emulator stamped packets
    # with a clock reading taken before they were read, and 2 of ~17 runs of a loaded
    # afternoon gave one echo of 35.7 ms (docs/FIDELITY-gaps.md).
    assert s["min_ms"] >= base - 0.5, s
    rows = r.run.probe_rtts
    assert len(rows) == s["echoed"] and rows["time_s"].min() >= 3.0
    assert json.loads((tmp_path / "k" / "summary.json").read_text())["probes"][0]["name"] == "ping"
