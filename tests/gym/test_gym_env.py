"""tcplab.gym: the environment checker, the Aurora and Orca presets' observation and
reward computed by hand (on hand-made intervals and on a tiny scenario whose numbers
follow from the path), determinism, and finish() into a run directory `tcplab report`
reads."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the gym extra's gymnasium is not installed")
pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from tcplab.engine import engine  # noqa: E402
from tcplab.gym import ENV_ID, Aurora, CongestionControlEnv, Orca, Scenarios  # noqa: E402
from tcplab.gym.simulation import FlowState, Interval, Simulation  # noqa: E402

SMALL = Scenarios(duration=0.5, rate_mbps=(10.0, 20.0), rtt_ms=(20.0, 40.0), competing=(0, 1))


def _iv(**kw):
    base = dict.fromkeys(Interval._fields, 0.0)
    base.update(kw)
    return Interval(**base)


def _st(**kw):
    base = dict.fromkeys(FlowState._fields, 0.0)
    base.update(kw)
    return FlowState(**base)


@pytest.mark.parametrize("preset", ["aurora", "orca"])
def test_the_environment_passes_gymnasiums_checker(preset):
    env = gymnasium.make(ENV_ID, scenarios=SMALL, preset=preset)
    check_env(env.unwrapped, skip_render_check=True)


def test_aurora_observation_and_reward_by_hand():
    """Two 10 ms intervals. The first: mean RTT 44 ms, min 40 ms. The second: 30 000
    bytes sent, 28 960 acked (20 segments), mean RTT 45 ms, min 42 ms, no loss.

    Second interval's features: latency gradient (45 - 44) ms / 10 ms = 0.1; latency
    ratio 45 / 40 (the minimum over both) = 1.125; sending ratio 30 000 / 28 960 =
    1.0359116. Reward (PCC-RL): throughput 28 960 / 1500 / 0.01 s = 1930.667 packets/s;
    10 x 1930.667 - 1000 x 0.045 - 2000 x 0 = 19 261.667, x 0.001 = 19.261667. With 5
    segments lost: loss ratio 5 / (20 + 5) = 0.2, 2000 x 0.2 = 400 less: 18.861667.
    """
    a = Aurora(history=2)
    a._obs = engine().AuroraObservation(2)  # what reset() makes: the engine's own code
    st = _st(srtt_us=44_000)
    first = _iv(
        duration_us=10_000,
        sent_bytes=14_480,
        acked_bytes=14_480,
        rtt_samples=5,
        rtt_mean_us=44_000,
        rtt_min_us=40_000,
    )
    a.observe(first, st)
    second = _iv(
        duration_us=10_000,
        sent_bytes=30_000,
        acked_bytes=28_960,
        rtt_samples=10,
        rtt_mean_us=45_000,
        rtt_min_us=42_000,
    )
    obs = a.observe(second, st)
    # history 2: [first's row, second's row]; first: gradient 0 (no previous), ratio
    # 44/40 = 1.1, sending ratio 1.
    np.testing.assert_allclose(obs, [0.0, 1.1, 1.0, 0.1, 1.125, 1.0359116], rtol=1e-6)
    assert a.reward(second, st) == pytest.approx(19.261667, abs=1e-6)
    lossy = second._replace(lost_pkts=5)
    assert a.reward(lossy, st) == pytest.approx(18.861667, abs=1e-6)


def test_orca_observation_and_reward_by_hand():
    """One 20 ms report (Orca's code: rl-module/envwrapper.py get_state): 50 000 bytes
    acked, 2 segments lost, 25 RTT samples; cwnd 100, 90 in flight, srtt 60 ms, min RTT
    40 ms.

    Throughput 50 000 / 0.02 = 2.5e6 B/s, the episode's maximum: feature 1 is 1. Pacing
    (Orca's kernel: 1500-byte MTU x max(cwnd, in flight) / srtt) 1500 x 100 / 0.06 =
    2.5e6 B/s: ratio 1. Loss 2 x 1448 / 0.02 = 144 800 B/s, 5 x that / 2.5e6 = 0.2896.
    Samples / cwnd 0.25; the interval 0.02 s; min RTT / srtt 40 / 60; the delay metric
    1.25 x 40 / 60 = 0.833333 (srtt above 1.25 x min RTT). Reward (2.5e6 - 5 x 144 800) /
    2.5e6 x 0.833333 = 0.7104 x 0.833333 = 0.592. History 1 (Orca's is 10).
    """
    o = Orca(history=1)
    o.reset(None, 0, np.random.default_rng(0))
    iv = _iv(duration_us=20_000, acked_bytes=50_000, lost_pkts=2, rtt_samples=25)
    st = _st(cwnd_pkts=100, inflight_pkts=90, srtt_us=60_000, min_rtt_us=40_000)
    obs = o.observe(iv, st)
    np.testing.assert_allclose(obs, [1.0, 1.0, 0.2896, 0.25, 0.02, 40 / 60, 50 / 60], rtol=1e-6)
    assert o.reward(iv, st) == pytest.approx(0.592, abs=1e-9)
    assert Orca().observation_space.shape == (70,)  # 10 reports of 7 features (d5.py)


def test_orca_waits_for_cubic_to_leave_slow_start_then_scales_its_window():
    """CUBIC over 20 Mbit/s, 40 ms, one BDP of buffer: the episode's first observation
    comes once CUBIC has left slow start (ssthresh < cwnd); an action of 0.5 doubles
    the window (int(100 x 4^0.5) = 200 percent) and -1 quarters it (25 percent)."""
    spec = {
        "experiment": {"duration": "4s", "seed": 1},
        "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms"}],
    }
    env = CongestionControlEnv(spec=spec, preset="orca", interval="20ms")
    env.reset(seed=0)
    st = env.simulation.state(0)
    assert st.ssthresh_pkts < st.cwnd_pkts
    before = st.cwnd_pkts
    env.step(0.5)
    assert env.unwrapped.preset.cwnd == 2 * before
    now = env.simulation.state(0).cwnd_pkts
    env.step(-1.0)
    assert env.unwrapped.preset.cwnd == max(4, now * 25 // 100)


def test_aurora_on_a_tiny_path_by_hand():
    """One external flow paced at 10 Mbit/s (privileged_start_fraction 0.5 of the
    bottleneck, a training option; action 0 keeps the rate) over a 20 Mbit/s,
    40 ms bottleneck: no queue, no loss. Per 100 ms interval, 10e6 / 8 x 0.1 = 125 000
    bytes of payload leave and are acked (86.3 segments: +- one 1448-byte segment).
    RTT: 40 ms propagation + a 1500-byte segment's serialization at 20 Mbit/s (0.6 ms)
    and twice at the 2 Gbit/s access links (12 us), the 52-byte ACK's about 21 us:
    40.63 ms. Reward: 125 000 / 1500 / 0.1 s = 833.33 packets/s -> 8333.3, minus
    1000 x 0.04063 = 40.63: (8333.3 - 40.6) x 0.001 = 8.2927, +- 0.0965 for one segment.
    Features: latency ratio 1, gradient 0, sending ratio 1 (+- one segment in 86).
    """
    spec = {
        "experiment": {"duration": "2s", "seed": 1},
        "bottleneck": {"rate": "20Mbps", "buffer": "2bdp"},
        "flows": [{"cc": "external", "rtt": "40ms"}],
    }
    env = CongestionControlEnv(
        spec=spec, preset=Aurora(history=1, privileged_start_fraction=0.5), interval="100ms"
    )
    env.reset(seed=0)
    for _ in range(12):
        obs, reward, _, _, info = env.step(np.zeros(1, np.float32))
    gradient, ratio, send_ratio = obs
    assert abs(gradient) < 0.01
    assert ratio == pytest.approx(1.0, abs=0.01)
    assert send_ratio == pytest.approx(1.0, abs=1 / 86)
    assert info["rtt_mean_us"] == pytest.approx(40_630, abs=150)
    assert reward == pytest.approx(8.2927, abs=0.1)


def _trajectory(seed, preset="aurora", steps=30):
    env = CongestionControlEnv(scenarios=SMALL, preset=preset)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(123)
    out = [obs]
    rewards = []
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(rng.uniform(-1, 1, size=1).astype(np.float32))
        out.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    return env.episode_spec, np.array(out), np.array(rewards)


@pytest.mark.parametrize("preset", ["aurora", "orca"])
def test_same_seed_same_episode_same_trajectory(preset):
    s1, o1, r1 = _trajectory(7, preset)
    s2, o2, r2 = _trajectory(7, preset)
    assert s1 == s2
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2)
    s3, _, _ = _trajectory(8, preset)
    assert s3 != s1


def test_finish_writes_a_run_directory_tcplab_report_reads(tmp_path):
    env = CongestionControlEnv(scenarios=SMALL, preset="aurora")
    env.reset(seed=3)
    for _ in range(5):
        env.step(np.ones(1, np.float32))
    out = tmp_path / "episode"
    result = env.finish(out)
    assert result.summary is not None
    manifest = json.loads((out / "manifest.json").read_text())
    listed = json.dumps(manifest)
    assert "actions.csv" in listed and "series.parquet" in listed
    rows = list(csv.DictReader(open(out / "actions.csv")))
    # reset writes the initial window (pacing rate and cwnd), the start both again, then
    # each of the 5 steps both again.
    assert len(rows) == 14 and {r["field"] for r in rows} == {"pacing_rate_bps", "cwnd_pkts"}
    done = subprocess.run(
        [sys.executable, "-m", "tcplab", "report", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (out / "report.png").exists()


def test_a_stepped_run_without_writes_equals_tcplab_run():
    """The stepping engine adds nothing: a cubic run stepped every 10 ms gives the same
    summary as tcplab.run of the same spec."""
    import tcplab

    spec = SMALL.sample(5, "cubic")
    sim = Simulation(spec)
    while not sim.advance(by_s=0.01):
        sim.state(0)
        sim.interval(0)
    stepped = sim.finish()
    plain = tcplab.run(spec, report=False)
    assert stepped.aggregate == plain.aggregate


def test_a_state_read_after_a_write_or_an_advance_is_the_new_state():
    """Simulation keeps a flow's state between reads (a driver reads it to observe and
    again to act); a write or an advance must not be answered from that copy."""
    sim = Simulation({**SMALL.sample(5, "cubic"), "flows": [{"cc": "external", "rtt": "40ms"}]})
    sim.advance(by_s=0.1)
    before = sim.state(0)
    assert sim.state(0) is before  # the kept copy, no crossing into the engine
    sim.set_cwnd(0, 77)
    assert sim.state(0).cwnd_pkts == 77 and before.cwnd_pkts != 77
    sim.set_pacing_rate(0, 3e6)
    assert sim.state(0).pacing_rate_bps == 3e6
    t = sim.state(0).now_us
    sim.advance_ns(sim._s.now_ns + 1_000_000)
    assert sim.state(0).now_us == t + 1000
    sim.advance(by_s=0.001)
    assert sim.state(0).now_us == t + 2000


def test_writes_are_refused_naming_the_argument():
    sim = Simulation(SMALL.sample(5, "cubic"))
    with pytest.raises(ValueError, match='pacing_rate|only cc = "external"'):
        sim.set_pacing_rate(0, 1e6)
    with pytest.raises(ValueError, match="flow"):
        sim.set_cwnd(9, 10)
    with pytest.raises(Exception, match="exactly one"):
        sim.advance()


def test_gymnasiums_vector_api_steps_several_environments():
    envs = gymnasium.make_vec(
        ENV_ID, num_envs=2, vectorization_mode="sync", scenarios=SMALL, preset="orca"
    )
    obs, _ = envs.reset(seed=[1, 2])
    assert obs.shape == (2, 70)  # Orca: 10 reports of 7 features
    obs, rewards, term, trunc, _ = envs.step(np.zeros((2, 1), np.float32))
    assert obs.shape == (2, 70) and rewards.shape == (2,)
    envs.close()


def test_an_external_flow_without_an_agent_is_a_fixed_window_in_a_plain_run():
    """`cc = "external"` with `params = { cwnd = 20 }` alone on 100 Mbit/s, 40 ms: the
    window never grows, so goodput is 20 x 1448 bytes per RTT (40.15 ms: 40 ms plus a
    1500-byte segment's serialization at 100 Mbit/s, 0.12 ms, and at the 10 Gbit/s access
    links, the ACK's small share): 20 x 1448 x 8 / 0.04015 = 5.77 Mbit/s once running
    (the first RTT of 2 s is the handshake: 0.04 s of nothing, so 2 s average 5.66)."""
    import tcplab

    r = tcplab.run(
        {
            "experiment": {"duration": "2s"},
            "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"},
            "flows": [{"cc": "external", "rtt": "40ms", "params": {"cwnd": 20}}],
        },
        report=False,
    )
    row = r.summary.iloc[0]
    assert row["cc"] == "external"
    assert row["mean_cwnd_pkts"] == pytest.approx(20, abs=0.01)
    assert row["goodput_bps"] == pytest.approx(5.66e6, rel=0.03)


POLICY = {
    "format": "tcplab-policy/1",
    "name": "test-linear",
    "preset": "aurora",
    "history": 10,
    "rtt_fraction": 0.5,
    "transform": "aurora_log",
    "layers": [
        {
            # Raise the rate while the sending ratio is 1, cut it as latency grows.
            "weights": [[0.0, -8.0, -2.0] * 10 + [1.0]],
            "bias": [0.5],
            "activation": "linear",
        }
    ],
}


def test_a_policy_runs_in_the_engine_as_it_ran_in_the_environment(tmp_path):
    """cc = "policy:FILE" in a plain tcplab.run gives the run the environment gives when
    the same network acts on its observations: the same engine code observes, decides
    and writes, so every flow's metrics agree exactly (the flow's name aside)."""
    import json as _json

    import tcplab

    path = tmp_path / "policy.json"
    path.write_text(_json.dumps(POLICY))
    spec = {
        "experiment": {"duration": "3s", "seed": 4},
        "bottleneck": {"rate": "12Mbps", "buffer": "1bdp", "loss": 0.002},
        "flows": [{"cc": "external", "rtt": "50ms"}, {"cc": "cubic", "rtt": "50ms"}],
    }
    policy = engine().Policy(_json.dumps(POLICY))
    env = CongestionControlEnv(spec=spec, preset=Aurora(), interval="rtt", rtt_fraction=0.5)
    obs, _ = env.reset(seed=4)
    steps = 0
    while True:
        obs, _, _, trunc, _ = env.step(np.array([policy.act(obs.tolist())], np.float32))
        steps += 1
        if trunc:
            break
    assert steps > 50
    stepped = env.finish()
    # The episode's spec (its seed drawn from reset's), flow 0 now the policy file.
    spec = _json.loads(_json.dumps(env.episode_spec))
    spec["flows"][0]["cc"] = f"policy:{path}"
    inside = tcplab.run(spec, report=False)
    assert inside.summary["cc"].tolist() == ["policy:test-linear", "cubic"]
    a = stepped.summary.drop(columns=["cc"])
    b = inside.summary.drop(columns=["cc"])
    assert a.equals(b), (a.T, b.T)
    assert stepped.aggregate == inside.aggregate


def test_a_bad_policy_file_is_refused_naming_the_field(tmp_path):
    import json as _json

    import tcplab
    from tcplab.errors import SpecError

    bad = dict(POLICY, layers=[{"weights": [[1.0, 2.0]], "bias": [0.0]}])
    path = tmp_path / "bad.json"
    path.write_text(_json.dumps(bad))
    spec = {
        "experiment": {"duration": "1s"},
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"cc": f"policy:{path}", "rtt": "40ms"}],
    }
    with pytest.raises(SpecError, match=r"flows\[0\]\.cc.*layers\[0\]\.weights\[0\]: has 2 inputs"):
        tcplab.run(spec, report=False)


def test_a_bad_scenario_range_is_refused_naming_the_field():
    from tcplab.errors import SpecError

    with pytest.raises(SpecError, match=r"scenarios\.rate_mbps"):
        Scenarios.from_dict({"rate_mbps": [50.0, 10.0]})
    with pytest.raises(SpecError, match=r"scenarios\.bogus.*known"):
        Scenarios.from_dict({"bogus": 1})
    with pytest.raises(SpecError, match=r"preset"):
        CongestionControlEnv(scenarios=SMALL, preset="vivace")


def test_make_without_arguments_draws_from_the_default_scenarios():
    # Issue 38: gymnasium.make(ENV_ID) failed, though Scenarios() has documented defaults.
    import tcplab.gym  # noqa: F401  (registers the environment)
    from tcplab.errors import SpecError
    from tcplab.gym import CongestionControlEnv, Scenarios

    env = gymnasium.make("tcplab/CongestionControl-v0")
    env.reset(seed=0)
    spec = env.unwrapped.episode_spec
    rate = float(str(spec["bottleneck"]["rate"]).removesuffix("Mbps"))
    assert 10.0 <= rate <= 100.0  # Scenarios' default rate range
    assert env.unwrapped.scenarios == Scenarios()
    with pytest.raises(SpecError, match="scenarios: give at most one of scenarios= and spec="):
        CongestionControlEnv(scenarios=Scenarios(), spec={"flows": []})
