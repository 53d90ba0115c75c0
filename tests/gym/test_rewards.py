"""The Aurora preset's opt-in reward, PCC Vivace's utility (tcplab.gym.rewards): values
computed by hand from u(x) = x^0.9 - 900 x g - 11.35 x L (Dong et al., NSDI 2018, 2.1),
with WebRTC's gradient filter (|g| < 0.01 counts as 0, g >= -10), and Vivace-Loss
(the same without the latency term)."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium", reason="the gym extra's gymnasium is not installed")

from tcplab.gym.rewards import VivaceReward, check_reward, ideal_reward, vivace_utility  # noqa: E402
from tcplab.gym.simulation import Interval  # noqa: E402

TEN_TO_09 = 7.943282347242815  # 10^0.9, by hand: e^(0.9 ln 10) = e^2.0723266


def test_vivace_utility_by_hand():
    assert vivace_utility(10.0, 0.0, 0.0) == pytest.approx(TEN_TO_09, abs=1e-9)
    # 10 % loss at 10 Mbit/s: 11.35 x 10 x 0.1 = 11.35.
    assert vivace_utility(10.0, 0.0, 0.1) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)
    # A gradient under 0.01 in magnitude is filtered out.
    assert vivace_utility(10.0, 0.005, 0.0) == pytest.approx(TEN_TO_09, abs=1e-9)
    assert vivace_utility(10.0, -0.009, 0.0) == pytest.approx(TEN_TO_09, abs=1e-9)
    # 0.02: 900 x 10 x 0.02 = 180.
    assert vivace_utility(10.0, 0.02, 0.0) == pytest.approx(TEN_TO_09 - 180.0, abs=1e-9)
    # -20 is bounded at -10: + 900 x 10 x 10 = 90 000.
    assert vivace_utility(10.0, -20.0, 0.0) == pytest.approx(TEN_TO_09 + 90_000.0, abs=1e-9)


def test_the_loss_charge_scales_with_the_rate():
    # Aurora's loss term is a constant 2000 x L x 0.001 whatever the rate; Vivace's is
    # 11.35 x L per Mbit/s: at 40 Mbit/s and 20 % loss, 11.35 x 40 x 0.2 = 90.8.
    assert vivace_utility(40.0, 0.0, 0.2) == pytest.approx(40.0**0.9 - 90.8, abs=1e-9)
    assert 40.0**0.9 == pytest.approx(27.6601, abs=1e-4)  # 40^0.9 = e^(0.9 x 3.688879)


def _iv(rtt_mean_us: float, samples: int = 5) -> Interval:
    # 50 ms; 62 500 bytes sent = 10 Mbit/s; 90 segments acked and 10 lost: loss 0.1.
    return Interval(50_000, 62_500, 90 * 1448, 90 * 1448, 10, 10, 0, samples, rtt_mean_us, 0)


def test_vivace_reward_of_intervals_by_hand():
    r = VivaceReward()
    assert r(_iv(100_000), 100_000) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)  # g = 0
    # Mean RTT up 1.5 ms over a 50 ms interval: g = 0.03, 900 x 10 x 0.03 = 270.
    assert r(_iv(101_500), 100_000) == pytest.approx(TEN_TO_09 - 270 - 11.35, abs=1e-9)
    # No RTT sample: the latency is srtt (101.5 ms, unchanged), g = 0.
    assert r(_iv(0, samples=0), 101_500) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)
    r.reset()  # a new episode has no previous interval: g = 0 again
    assert r(_iv(150_000), 150_000) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)


def test_vivace_loss_has_no_latency_term():
    # Vivace-Loss (b = 0): the 1.5 ms rise of the second interval costs nothing.
    r = VivaceReward(latency=False)
    assert r(_iv(100_000), 100_000) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)
    assert r(_iv(101_500), 100_000) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)


def test_the_preset_pays_the_chosen_reward():
    from tcplab.gym import Aurora
    from tcplab.gym.simulation import FlowState

    st = FlowState(*([0] * len(FlowState._fields)))._replace(srtt_us=100_000)
    for name, second in (("vivace", TEN_TO_09 - 270 - 11.35), ("vivace-loss", TEN_TO_09 - 11.35)):
        a = Aurora(reward=name)
        a._vivace.reset()
        assert a.reward(_iv(100_000), st) == pytest.approx(TEN_TO_09 - 11.35, abs=1e-9)
        assert a.reward(_iv(101_500), st) == pytest.approx(second, abs=1e-9)


def test_ideal_rewards_by_hand():
    # Aurora: 12 Mbit/s = 1000 packets/s of 1500 B; 10 x 1000 x 0.001 = 10.
    assert ideal_reward("aurora", 12e6) == pytest.approx(10.0, abs=1e-12)
    assert ideal_reward("vivace", 10e6) == pytest.approx(TEN_TO_09, abs=1e-9)


def test_an_unknown_reward_is_refused_naming_the_field():
    from tcplab.gym import Aurora

    with pytest.raises(
        ValueError, match=r"reward: one of 'aurora', 'vivace', 'vivace-loss'; got 'loss'"
    ):
        check_reward("loss")
    with pytest.raises(ValueError, match="reward"):
        Aurora(reward="Vivace")


def test_the_reward_changes_only_the_training_signal():
    """Same episode, same actions: the observations are identical under every reward (the
    deployed policy sees what it saw in training); the rewards are not."""
    import numpy as np
    from tcplab.gym import Aurora, CongestionControlEnv, Scenarios

    small = Scenarios(duration=1.0, rate_mbps=(10.0, 20.0), rtt_ms=(20.0, 40.0), loss=(0.0, 0.01))
    runs = {}
    for name in ("aurora", "vivace-loss", "vivace"):
        env = CongestionControlEnv(scenarios=small, preset=Aurora(reward=name), interval="rtt")
        obs, _ = env.reset(seed=7)
        observations, rewards = [obs], []
        for k in range(40):
            obs, r, _, trunc, _ = env.step(np.array([3.0 if k % 4 else -2.0], np.float32))
            observations.append(obs)
            rewards.append(r)
            if trunc:
                break
        runs[name] = (np.array(observations), np.array(rewards))
    base_obs, base_rewards = runs["aurora"]
    for name in ("vivace-loss", "vivace"):
        np.testing.assert_array_equal(runs[name][0], base_obs)
        assert not np.allclose(runs[name][1], base_rewards)
    assert not np.allclose(runs["vivace"][1], runs["vivace-loss"][1])
