"""Orca deployed (issue 38): a ``policy:`` file with ``"preset": "orca"`` runs in the
engine as tcplab.gym's Orca preset runs it, over CUBIC; what it writes follows Orca's
integer window rule. tests/backends/test_kernel_orca.py runs it on the kernel."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

import tcplab  # noqa: E402
from tcplab import policy as policy_mod  # noqa: E402
from tcplab.engine import engine  # noqa: E402
from tcplab.gym import CongestionControlEnv  # noqa: E402

REPORT_NS = 20_000_000  # Orca's report period (orca-server-mahimahi.cc)


def orca_policy(bias: float, newest: list[float] | None = None) -> dict:
    """A linear Orca policy over 10 reports of 7 features: weights on the newest report
    only (the last 7 inputs)."""
    w = [0.0] * 63 + (newest or [0.0] * 7)
    return {
        "format": "tcplab-policy/1",
        "name": "orca-test",
        "preset": "orca",
        "history": 10,
        "interval_ns": REPORT_NS,
        "transform": "none",
        "layers": [{"weights": [w], "bias": [bias], "activation": "linear"}],
    }


def spec(cc: str, duration: str = "6s") -> dict:
    return {
        "experiment": {"duration": duration, "seed": 3},
        "bottleneck": {"rate": "20Mbps", "buffer": "1bdp", "loss": 0.001},
        "flows": [{"cc": cc, "rtt": "40ms"}, {"cc": "cubic", "rtt": "60ms"}],
    }


def test_a_do_nothing_orca_policy_is_cubic_exactly(tmp_path):
    """Action 0 writes int(100 x 4^0) x cwnd / 100 = cwnd, the window CUBIC has: the
    run is plain CUBIC's, every metric equal (the flow's name aside)."""
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(orca_policy(0.0)))
    plain = tcplab.run(spec("cubic"), report=False)
    driven = tcplab.run(spec(f"policy:{path}"), report=False)
    assert driven.summary["cc"].tolist() == ["policy:orca-test", "cubic"]
    a = plain.summary.drop(columns=["cc"])
    b = driven.summary.drop(columns=["cc"])
    assert a.equals(b), (a.T, b.T)


def test_an_orca_policy_runs_in_the_engine_as_it_ran_in_the_environment(tmp_path):
    """The same network acting on the environment's observations and inside the engine
    gives the same run: one engine code observes, decides and writes."""
    # Grow while the newest report shows full throughput and no queue (delay metric 1),
    # shrink on loss and as the delay metric falls.
    pol = orca_policy(-0.6, [0.2, 0.0, -1.0, 0.0, 0.0, 0.0, 0.5])
    path = tmp_path / "orca.json"
    path.write_text(json.dumps(pol))
    net = engine().Policy(json.dumps(pol))
    env = CongestionControlEnv(spec=spec("cubic"), preset="orca", interval="20ms")
    obs, _ = env.reset(seed=3)
    actions = []
    while True:
        a = net.act(obs.tolist())
        actions.append(a)
        obs, _, _, trunc, _ = env.step(np.array([a], np.float32))
        if trunc:
            break
    assert len(actions) > 100
    assert min(actions) < 0 < max(actions)  # it both shrinks and grows the window
    stepped = env.finish()
    run_spec = json.loads(json.dumps(env.episode_spec))
    run_spec["flows"][0]["cc"] = f"policy:{path}"
    inside = tcplab.run(run_spec, report=False)
    assert inside.summary["cc"].tolist() == ["policy:orca-test", "cubic"]
    a = stepped.summary.drop(columns=["cc"])
    b = inside.summary.drop(columns=["cc"])
    assert a.equals(b), (a.T, b.T)


def test_a_quartering_policy_takes_less_than_half_of_what_cubic_takes(tmp_path):
    """Action -1 writes max(4, int(25 x cwnd / 100)) every 20 ms from CUBIC's first exit
    from slow start (HyStart's, about 0.23 s in here). One flow, 20 Mbit/s, 40 ms, no
    random loss: CUBIC alone delivers about 19 Mbit/s, and so does a policy whose writes
    kept the window (the do-nothing test above). Quartered every half RTT, the window
    regrows between reports only by what the segments still in flight acknowledge
    (slow start below ssthresh adds one segment per segment acked, tcp_slow_start):
    measured, 5.1 Mbit/s over 10 s. The test asks for less than half of CUBIC's, and
    that every write after the first report is below the window it read."""
    path = tmp_path / "quarter.json"
    path.write_text(json.dumps(orca_policy(-1.0)))
    one = lambda cc: {  # noqa: E731
        "experiment": {"duration": "10s", "seed": 1},
        "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "40ms"}],
    }
    cubic = tcplab.run(one("cubic"), report=False).summary.iloc[0]["goodput_bps"]
    quarter = tcplab.run(one(f"policy:{path}"), report=False).summary.iloc[0]["goodput_bps"]
    assert cubic > 18e6
    assert quarter < cubic / 2, (quarter, cubic)
    env = CongestionControlEnv(spec=one("cubic"), preset="orca", interval="20ms")
    env.reset(seed=1)
    for _ in range(30):
        read = env.simulation.state(0).cwnd_pkts
        _, _, _, _, info = env.step(-1.0)
        assert info["cwnd_written"] == max(4, int(read) // 4), (read, info)


def test_an_orca_policy_s_flow_runs_cubic_underneath(tmp_path):
    """The engine config of a spec with an Orca flow: the flow runs CUBIC and an agent
    drives it (an Aurora policy's flow runs external)."""
    from tcplab.lowering import resolve, world_config
    from tcplab.specs.load import as_spec

    path = tmp_path / "orca.json"
    path.write_text(json.dumps(orca_policy(0.0)))
    assert policy_mod.underlay(policy_mod.load(f"policy:{path}")) == "cubic"
    config = world_config(resolve(as_spec(spec(f"policy:{path}"))))
    assert [f["cc"] for f in config["flows"]] == ["cubic", "cubic"]
    assert [a["flow"] for a in config["agents"]] == [0]
    assert config["agents"][0]["policy"]["preset"] == "orca"
