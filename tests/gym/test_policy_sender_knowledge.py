"""A deployed policy knows what a sender knows (issue 38): it starts from TCP's initial
window over the first RTT, its rate bounds are absolute, and nothing of the path's
configuration reaches it. Computed by hand; the do-nothing comparison fails on tcplab
0.7.1 (which started every policy at 1.0 x the configured bottleneck rate: 9.5 vs 37.9
Mbit/s over 10 and 40 Mbit/s)."""

from __future__ import annotations

import json

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the gym extra's gymnasium is not installed")
pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

import tcplab  # noqa: E402
from tcplab.gym import Aurora, CongestionControlEnv  # noqa: E402

MSS = 1448


def do_nothing(history: int = 10) -> dict:
    return {
        "format": "tcplab-policy/1",
        "name": "do-nothing",
        "preset": "aurora",
        "history": history,
        "rtt_fraction": 0.5,
        "transform": "aurora_log",
        "layers": [{"weights": [[0.0] * (3 * history + 1)], "bias": [0.0]}],
    }


def alone(rate: str, duration: str = "10s", cc: str = "external") -> dict:
    return {
        "experiment": {"duration": duration, "seed": 1},
        "bottleneck": {"rate": rate, "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "60ms"}],
    }


def test_a_do_nothing_policy_sends_the_same_over_10_and_40_mbits(tmp_path):
    """Alone over 10 and 40 Mbit/s, 60 ms: the policy's start is 10 segments per the
    handshake's RTT (60 ms plus two header-only serializations, 60.04-60.05 ms):
    10 x 1448 x 8 / 0.06004 = 1.929 Mbit/s of payload, below both links, so no queue
    and no loss, and action 0 keeps it: goodput over the 10 s is that rate over the
    time after the first data arrives (one handshake RTT and one-way delay, about 0.09
    s), 1.929 x 9.91 / 10 = 1.91 Mbit/s on both links (within 3 %, for the segments
    in flight at the end and the pacing's rounding); the two within 5 % of each
    other. tcplab 0.7.1 gave 9.5 and 37.9 Mbit/s (it started at the configured rate)."""
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(do_nothing()))
    got = {}
    for rate in ("10Mbps", "40Mbps"):
        r = tcplab.run(alone(rate, cc=f"policy:{path}"), report=False)
        got[rate] = float(r.summary.iloc[0]["goodput_bps"])
    assert got["10Mbps"] == pytest.approx(1.91e6, rel=0.03), got
    assert got["40Mbps"] == pytest.approx(1.91e6, rel=0.03), got
    assert abs(got["10Mbps"] - got["40Mbps"]) <= 0.05 * got["40Mbps"], got


def test_the_start_rate_is_the_initial_window_over_the_handshakes_rtt():
    """reset() waits for the first RTT sample (the handshake's: 60 ms plus a 52-byte
    header's serialization at 20 Mbit/s each way, 2 x 20.8 us, and the access links'
    ~0.1 us: 60.042 ms) and starts at 10 x 1448 x 8 / srtt bit/s, exactly; the
    window is then 2 x rate x srtt = 20 segments. The environment's actions.csv has the
    initial window first (rate 0 = unpaced, 10 segments), then the start."""
    env = CongestionControlEnv(spec=alone("20Mbps", "1s"), preset=Aurora(), interval="rtt")
    env.reset(seed=0)
    sim = env.simulation
    writes = sim.actions
    assert [(w[2], w[3]) for w in writes[:2]] == [("pacing_rate_bps", 0.0), ("cwnd_pkts", 10.0)]
    start_ns, _, _, rate = writes[2]
    assert writes[3][2:] == ("cwnd_pkts", 20.0)
    srtt_us = sim.state(0).srtt_us  # unchanged: no data ACK before the first interval ends
    assert srtt_us == pytest.approx(60_042, abs=10)
    assert rate == pytest.approx(10 * MSS * 8e6 / srtt_us, rel=1e-12)
    # The look after the one that first saw the sample is at most 1 ms late.
    assert start_ns % 1_000_000 == 0 and 60e6 < start_ns <= 62e6
    assert "privileged_start_fraction" not in env._info()


def test_the_floor_is_four_segments_per_srtt_at_the_step_computed_by_hand():
    """Constant action -10 (rate / 1.25 per step) from the start, 10 segments per the
    handshake's srtt (60.04 ms). After 4 steps the rate is 10 / 1.25^4 = 4.096 segments
    per that srtt; the fifth would be 3.28, below the floor of 4 segments per the srtt the
    step reads (about 60.6 ms once data is acked: 1500-byte segments' serialization at 20
    Mbit/s, so 3.96 per the handshake's): from the fifth step the rate is exactly
    4 x 1448 x 8 / srtt, and the window the least, 10 segments."""
    env = CongestionControlEnv(spec=alone("20Mbps", "2s"), preset=Aurora(), interval="rtt")
    env.reset(seed=0)
    sim = env.simulation
    start = sim.actions[2][3]
    srtts, rates = [], []
    for _ in range(8):
        srtts.append(sim.state(0).srtt_us)
        _, _, _, _, info = env.step(np.array([-10.0], np.float32))
        rates.append(info["rate_bps"])
    for k in range(4):
        assert rates[k] == pytest.approx(start / 1.25 ** (k + 1), rel=1e-12), (k, rates)
    for k in range(4, 8):
        assert rates[k] == pytest.approx(4 * MSS * 8e6 / srtts[k], rel=1e-12), (k, rates)
    assert sim.actions[-1][2:] == ("cwnd_pkts", 10.0)


def test_the_privileged_start_is_marked_in_info_and_summary(tmp_path):
    """privileged_start_fraction=0.5: the start is 0.5 x the configured 20 Mbit/s, which
    the environment's info and the finished run's summary.json name."""
    env = CongestionControlEnv(
        spec=alone("20Mbps", "1s"), preset=Aurora(privileged_start_fraction=0.5)
    )
    _, info = env.reset(seed=0)
    assert info["privileged_start_fraction"] == 0.5
    assert env.simulation.actions[2][3] == 10e6
    env.finish(tmp_path / "run")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["privileged"] == {"privileged_start_fraction": 0.5}
    with pytest.raises(ValueError, match="privileged_start_fraction"):
        Aurora(privileged_start_fraction=5.0)


def test_a_policy_file_with_a_privileged_field_is_refused_naming_it(tmp_path):
    from tcplab.errors import SpecError

    for field in ("privileged_start_fraction", "start_fraction"):
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps({**do_nothing(), field: 0.5}))
        with pytest.raises(SpecError, match=rf"flows\[0\]\.cc.*{field}: .*remove the field"):
            tcplab.run(alone("10Mbps", "1s", f"policy:{path}"), report=False)
