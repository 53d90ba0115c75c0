"""Bad input to trained policies and the stepping engine (issue 38, "Bad input"): each case
gives a message naming the argument, field or file, and ``tcplab run`` exits 2 (an input
error), never 1 or a raw OverflowError, RecursionError or engine panic."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

from tcplab.cli import main  # noqa: E402
from tcplab.gym.simulation import Simulation, run_with  # noqa: E402

SPEC = """
[experiment]
duration = "{duration}"

[bottleneck]
rate = "{rate}"
buffer = "1bdp"

[[flows]]
cc = "policy:{policy}"
rtt = "40ms"
"""


def policy(**kw) -> dict:
    return {
        "format": "tcplab-policy/1",
        "name": "p",
        "preset": "aurora",
        "history": 1,
        "transform": "none",
        "layers": [{"weights": [[0.0, 0.0, 0.0]], "bias": [0.0]}],
        **kw,
    }


def run_cli(tmp_path, content: str | bytes, capsys, duration="1s", rate="10Mbps") -> str:
    p = tmp_path / "policy.json"
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(duration=duration, rate=rate, policy=p))
    assert main(["run", str(spec), "-o", str(tmp_path / "out")]) == 2
    return capsys.readouterr().err


def test_an_interval_below_one_millisecond_is_refused_naming_the_field(tmp_path, capsys):
    err = run_cli(tmp_path, json.dumps(policy(interval_ns=1)), capsys)
    assert "interval_ns: must be at least 1000000" in err, err


def test_an_interval_longer_than_the_run_is_refused(tmp_path, capsys):
    err = run_cli(tmp_path, json.dumps(policy(interval_ns=2_000_000_000)), capsys)
    assert "flows[0].cc" in err and "interval_ns 2000000000 is longer than the run" in err, err


def test_the_pre_run_estimate_counts_policy_steps(tmp_path, capsys):
    """1 ms steps over 200 000 s: 2e8 steps, over the 1e8 limit (the run's packets, 1
    Mbit/s x 200 000 s / 12 000 bits = 1.7e7, are within theirs)."""
    err = run_cli(tmp_path, json.dumps(policy(interval_ns=1_000_000)), capsys, "200000s", "1Mbps")
    assert "trained policies would act about 200,000,000 times" in err, err


def test_a_policy_file_nested_100000_arrays_deep_is_refused_naming_the_file(tmp_path, capsys):
    err = run_cli(tmp_path, "[" * 100_000 + "]" * 100_000, capsys)
    assert "policy.json" in err and "nested deeper" in err, err


# -- the environment and the stepping engine ----------------------------------------

SMALL = {
    "experiment": {"duration": "1s", "seed": 1},
    "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "external", "rtt": "40ms"}],
}


def env(**kw):
    pytest.importorskip("gymnasium")
    from tcplab.gym import CongestionControlEnv

    return CongestionControlEnv(**{"spec": SMALL, **kw})


@pytest.mark.parametrize("preset", ["aurora", "orca"])
@pytest.mark.parametrize("action", [[math.nan], [math.inf], [-math.inf]])
def test_a_non_finite_action_is_refused_naming_the_action(preset, action):
    """(Orca's preset raised a bare ValueError from round(nan); Aurora's treated NaN as 0.)"""
    cc = "cubic" if preset == "orca" else "external"
    e = env(preset=preset, spec=dict(SMALL, flows=[{"cc": cc, "rtt": "40ms"}]))
    e.reset(seed=0)
    with pytest.raises(ValueError, match=r"action: must be finite; got \[(nan|inf|-inf)\]"):
        e.step(np.array(action, np.float32))


@pytest.mark.parametrize("action", [[1.0, 2.0], [[1.0], [2.0]], []])
def test_a_wrong_shaped_action_is_refused_not_cut(action):
    e = env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match=r"action: shape .*action space is \(1,\)"):
        e.step(np.array(action, np.float32))
    e.step(0.5)  # a bare number for a one-element space is fine


def test_an_interval_longer_than_the_episode_is_refused_at_reset():
    from tcplab.errors import SpecError

    e = env(interval="2s")
    with pytest.raises(SpecError, match=r"interval: '2s' is longer than the episode \(1 s\)"):
        e.reset(seed=0)


def test_advance_to_an_earlier_time_is_refused():
    sim = Simulation(SMALL)
    sim.advance(to_s=0.5)
    with pytest.raises(ValueError, match=r"to_s: 0\.2 is before now \(0\.5 s\)"):
        sim.advance(to_s=0.2)
    with pytest.raises(ValueError, match=r"to_ns: .* is before now"):
        sim._s.advance(100)


def _sim():
    return Simulation(SMALL)


INF, NAN, HUGE = math.inf, math.nan, 1e30
# Every public argument of Simulation and the environment that takes a number, with
# infinite, negative, huge and NaN values: before, nine of these raised a raw
# OverflowError ("int too big to convert", "cannot convert float infinity to integer")
# or ValueError ("cannot convert float NaN to integer"), and run_with(interval_s=-1)
# never returned. Each now names its argument; the few allowed values are marked None.
CASES = [
    ("advance to_s", lambda v: _sim().advance(to_s=v), {INF: "to_s", -1: "to_s", NAN: "to_s"}),
    ("advance by_s", lambda v: _sim().advance(by_s=v), {INF: "by_s", -1: "by_s", NAN: "by_s"}),
    ("advance_ns", lambda v: _sim().advance_ns(v), {INF: "to_ns", -1: "to_ns", 10**30: "to_ns"}),
    ("state", lambda v: _sim().state(v), {INF: "flow", -1: "flow", 10**30: "flow"}),
    ("interval", lambda v: _sim().interval(v), {INF: "flow", -1: "flow", 10**30: "flow"}),
    ("cc", lambda v: _sim().cc(v), {INF: "flow", -1: "flow", 10**30: "flow"}),
    ("set_cwnd", lambda v: _sim().set_cwnd(0, v), {INF: "cwnd_pkts", -1: "cwnd_pkts", HUGE: "cwnd_pkts", NAN: "cwnd_pkts"}),
    ("set_cwnd flow", lambda v: _sim().set_cwnd(v, 10), {-1: "flow", 10**30: "flow"}),
    ("set_pacing_rate", lambda v: _sim().set_pacing_rate(0, v), {INF: "pacing_rate", -1: "pacing_rate", NAN: "pacing_rate", HUGE: None}),
    ("set_ssthresh", lambda v: _sim().set_ssthresh(0, v), {INF: "pkts", -1: "pkts", HUGE: "pkts", NAN: "pkts"}),
    ("run_with", lambda v: run_with(SMALL, lambda s: None, v), {INF: "interval_s", -1: "interval_s", NAN: "interval_s", HUGE: None}),
    ("env interval", lambda v: env(interval=v), {INF: "interval", -1: "interval", NAN: "interval"}),
    ("env interval at reset", lambda v: env(interval=v).reset(seed=0), {HUGE: "interval"}),
    ("env rtt_fraction", lambda v: env(interval="rtt", rtt_fraction=v), {INF: "rtt_fraction", -1: "rtt_fraction", HUGE: "rtt_fraction", NAN: "rtt_fraction"}),
    ("env flow", lambda v: env(flow=v), {INF: "flow", -1: "flow", NAN: "flow"}),
    ("env flow at reset", lambda v: env(flow=v).reset(seed=0), {10**30: "flow"}),
]  # fmt: skip


@pytest.mark.parametrize(
    "call, value, name",
    [(call, v, name) for _, call, cases in CASES for v, name in cases.items()],
    ids=[f"{what}={v}" for what, _, cases in CASES for v in cases],
)
def test_bad_numbers_are_refused_naming_the_argument(call, value, name):
    if name is None:
        call(value)  # allowed: a time or rate past any end runs to the end
        return
    with pytest.raises(ValueError, match=rf"(^|: ){name}: "):
        call(value)
