"""The kernel backend's policy agent (tcplab/backends/kernel/policy_agent.py) without a
kernel: from fixed snapshots of the BPF program's measurement map it makes the
intervals, observations and writes the simulator's agent makes, computed by hand here.
The agent and the simulator run one controller (crates/controllers/src/policy's
PolicyController, through tcplab._engine.PolicyAgent), so what is checked is the map-to-interval step and the
loop around the controller. tests/backends/test_kernel_policy.py runs it on a kernel."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

from tcplab.backends.kernel.policy_agent import (  # noqa: E402
    Driver,
    OrcaDriver,
    agent_config,
    counters,
    interval,
    report,
)
from tcplab.backends.kernel.policy_maps import Scale  # noqa: E402
from tcplab.engine import engine  # noqa: E402
from tcplab.lowering import config_json, resolve, world_config  # noqa: E402
from tcplab.specs.load import as_spec  # noqa: E402

# Two reads of one flow's policy_meas entry (policy_maps.h's struct policy_meas).
MEAS_1 = {
    "bytes_sent": 30_000,
    "rtt_sum_us": 150_000,
    "rtt_count": 3,
    "pacing_rate": 1_000_000,
    "rtt_min_us": 45_000,
    "delivered": 20,
    "lost": 1,
    "total_retrans": 1,
    "srtt_us": 48_000,
    "mss": 1000,
    "cwnd": 10,
    "applied": 1,
    "ssthresh": 2**31 - 1,
    "inflight": 10,
    "min_rtt_us": 45_000,
    "pad": 0,
}
# The entry policy_init makes at the connection's start: srtt is the handshake's sample,
# every counter 0, no RTT sample of data yet (rtt_min_us ~0).
MEAS_0 = {
    **dict.fromkeys(MEAS_1, 0),
    "rtt_min_us": 2**32 - 1,
    "srtt_us": 48_000,
    "mss": 1000,
    "cwnd": 10,
    "applied": 1,
    "ssthresh": 2**31 - 1,
    "min_rtt_us": 2**32 - 1,
}
MEAS_2 = {
    **MEAS_1,
    "bytes_sent": 50_000,
    "rtt_sum_us": 270_000,
    "rtt_count": 5,
    "delivered": 35,
    "srtt_us": 55_000,
}


def test_intervals_from_two_map_reads_by_hand():
    first = interval(counters(None), counters(MEAS_1), 20_000_000)
    # 20 ms; 30 KB sent; 20 segments of 1000 B acked; 1 lost, 1 retransmitted; 3 samples
    # of mean 150 ms / 3 = 50 ms, minimum 45 ms. (delivered_bytes, rto_count: unseen.)
    assert first == [20_000, 30_000, 20_000, 0, 1, 1, 0, 3, 50_000.0, 45_000]
    second = interval(counters(MEAS_1), counters(MEAS_2), 25_000_000)
    # 20 KB more sent, 15 segments acked, 2 samples of (270 - 150) / 2 = 60 ms.
    assert second == [25_000, 20_000, 15_000, 0, 0, 0, 0, 2, 60_000.0, 45_000]
    # Before the connection exists (no entry): nothing happened.
    assert interval(counters(None), counters(None), 5_000_000)[1:] == [0.0] * 9


def test_the_observation_of_map_reads_is_the_simulators_by_hand():
    obs = engine().AuroraObservation(1)  # the simulator's observation code
    a = obs.push(interval(counters(None), counters(MEAS_1), 20_000_000), 48_000)
    # No gradient yet; latency ratio 50 / 45 ms; sending ratio 30 / 20 KB.
    assert a == pytest.approx([0.0, 50 / 45, 1.5], rel=1e-6)
    b = obs.push(interval(counters(MEAS_1), counters(MEAS_2), 25_000_000), 55_000)
    # Gradient (60 - 50 ms) / 25 ms = 0.4; ratio 60 / 45; sending ratio 20 / 15 KB.
    assert b == pytest.approx([0.4, 60 / 45, 20 / 15], rel=1e-6)


POLICY = {
    "format": "tcplab-policy/1",
    "name": "by-hand",
    "preset": "aurora",
    "history": 1,
    "rtt_fraction": 0.5,
    "transform": "none",
    "layers": [{"weights": [[0.0, 4.0, 1.0]], "bias": [-2.0], "activation": "linear"}],
}


class FakeMaps:
    """The two maps of one program, as PolicyMaps offers them."""

    def __init__(self, reads):
        self.reads = list(reads)
        self.writes = []

    def read(self, port):
        return self.reads.pop(0)

    def write(self, port, rate_bps, cwnd, gen, scale=None):
        self.writes.append((port, rate_bps, cwnd, gen) + ((scale,) if scale else ()))


def _config(tmp_path, policy=POLICY):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(policy))
    spec = as_spec(
        {
            "experiment": {"duration": "1s"},
            "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "40ms"}, {"cc": f"policy:{path}", "rtt": "40ms"}],
        }
    )
    return world_config(resolve(spec))


def test_the_agent_writes_what_the_controller_decides_by_hand(tmp_path):
    config = _config(tmp_path)
    cfg = agent_config(config, {1: "tl1a"}, 5000, tmp_path)
    # flow 1: port 5000 + 1, its program registered as tl1a
    assert cfg["agents"] == [{"index": 0, "port": 5001, "preset": "aurora", "kernel_name": "tl1a"}]
    d = Driver(engine(), config_json(config), 0, 5001)
    maps = FakeMaps([None, MEAS_0, MEAS_1, None])
    d.start(maps)
    # Before the connection: TCP's initial window, unpaced; a look 1 ms later. Nothing of
    # the emulated path (10 Mbit/s, 40 ms) is read.
    assert maps.writes == [(5001, 0.0, 10, 1)]
    assert d.next_ns == 1_000_000
    # 1 ms: no entry yet (no connection): nothing written, look again at 2 ms.
    d.step(maps, 1_000_000, last=False)
    assert len(maps.writes) == 1 and d.next_ns == 2_000_000
    # 2 ms: the entry with the handshake's 48 ms srtt: the start, 10 x 1448 B x 8 / 0.048 s
    # = 2 413 333.33 bit/s, window 2 x rate x srtt = 20 segments; next step half of srtt
    # later, 2 + 24 = 26 ms.
    d.step(maps, 2_000_000, last=False)
    port, rate, cwnd, gen = maps.writes[-1]
    assert (port, cwnd, gen) == (5001, 20, 2)
    start = 10 * 1448 * 8e6 / 48_000
    assert rate == pytest.approx(start, rel=1e-12)
    assert d.next_ns == 26_000_000
    d.step(maps, 26_000_000, last=False)
    # The interval since the start is MEAS_1's counters (MEAS_0's are 0): observation
    # (0, 50/45, 1.5), action 4 x 1.1111 + 1.5 - 2 = 3.9444 (as float32); rate
    # 2 413 333.33 x (1 + 0.025 x 3.9444) = 2 651 308.6 bit/s; cwnd 2 x 331 413.6 B/s x
    # 0.048 s / 1448 B = 21.97 -> 22; next step at 26 + 48 / 2 = 50 ms.
    port, rate, cwnd, gen = maps.writes[-1]
    assert (port, cwnd, gen) == (5001, 22, 3)
    assert rate == pytest.approx(start * (1 + 0.025 * (4 * 50 / 45 + 1.5 - 2)), rel=1e-6)
    assert d.next_ns == 50_000_000
    assert d.steps[-1]["action"] == pytest.approx(4 * 50 / 45 - 0.5, rel=1e-6)
    # The end: the observation only, nothing written.
    d.step(maps, 60_000_000, last=True)
    assert len(maps.writes) == 3 and d.done
    raw = {"flows": [{"cc": "cubic"}, {"cc": "external"}]}
    report(raw, config, {"agents": [{"index": 0, "steps": d.steps}]})
    assert raw["flows"][1]["cc"] == "policy:by-hand"  # as the simulator names it
    # One acting step, run 0 ms after the 26 ms the controller had planned. MEAS_1 says
    # the socket had applied generation 1 only, so the 2 ms write (generation 2) was still
    # pending at that step: counted.
    assert raw["kernel"]["policy_agents"] == [
        {"flow": 1, "steps": 1, "writes_pending": 1, "late_ms_mean": 0.0, "late_ms_max": 0.0}
    ]


ORCA = {
    "format": "tcplab-policy/1",
    "name": "orca-by-hand",
    "preset": "orca",
    "history": 1,
    "interval_ns": 20_000_000,
    "transform": "none",
    "layers": [{"weights": [[0.0] * 7], "bias": [0.5], "activation": "tanh"}],
}


def test_the_orca_agent_waits_for_cubic_then_writes_windows_only_by_hand(tmp_path):
    """An Orca policy on the kernel (policy_cubic.bpf.c: the kernel's CUBIC): nothing is
    written until the map shows CUBIC out of slow start (ssthresh < cwnd); then each
    report writes only a window. Action tanh(0.5) = 0.462117; int(100 x 4^0.462117) =
    int(189.77) = 189; 189 x 30 / 100 = 56 (integer division) on the 30-segment window."""
    config = _config(tmp_path, ORCA)
    assert config["flows"][1]["cc"] == "cubic"  # Orca's underlay
    cfg = agent_config(config, {1: "tl2b"}, 5000, tmp_path)
    assert cfg["agents"][0]["preset"] == "orca"
    d = OrcaDriver(engine(), config_json(config), 0, 5001)
    slow = {**MEAS_1, "ssthresh": 2**31 - 1, "cwnd": 30}
    ready = {**MEAS_1, "ssthresh": 20, "cwnd": 30}
    later = {**MEAS_2, "ssthresh": 20, "cwnd": 30, "inflight": 28, "applied": 0}
    maps = FakeMaps([None, slow, ready, later, later])
    d.start(maps)
    assert maps.writes == [] and d.next_ns == 1_000_000
    d.step(maps, 1_000_000, last=False)  # no entry yet
    d.step(maps, 2_000_000, last=False)  # slow start: look again
    assert maps.writes == [] and d.next_ns == 3_000_000
    d.step(maps, 3_000_000, last=False)  # out of slow start: the first report in 20 ms
    assert maps.writes == [] and d.next_ns == 23_000_000
    d.step(maps, 23_000_000, last=False)
    # The window written is 189 % of the socket's when it lands (56 on the 30 read).
    assert maps.writes == [(5001, 0.0, 56, 1, Scale(189, 4))]
    assert d.steps[-1]["action"] == pytest.approx(0.462117, abs=1e-6)
    assert d.next_ns == 43_000_000
    d.step(maps, 43_000_000, last=True)  # the end: observed, nothing written
    assert len(maps.writes) == 1 and d.done
