"""Train a small learned congestion controller with tcplab.gym, in about a minute of CPU,
and evaluate it on held-out scenarios against CUBIC and BBR.

    python examples/gym_cem.py [--iterations 25] [--population 32] [--episodes 8]
                               [--validation 32] [--seed 0] [--workers 2] [-o policy.json]
                               [--reward aurora|vivace-loss|vivace] [--preset aurora|orca]
    tcplab examples gym && python gym/gym_cem.py ...      (from an installed tcplab)

The policy is linear (numpy only, no torch): Aurora's observation (the last 10 monitor
intervals' latency gradient, latency ratio and sending ratio; tcplab.gym.presets.Aurora)
through logarithms of the two ratios, times a weight vector, clipped to Aurora's action
range [-10, 10] (a rate change of up to 25 % per interval). It is a tcplab policy file
(tcplab/policy.py; ``-o policy.json`` writes it), evaluated by the engine's own network
code both in training and when a spec runs it as ``cc = "policy:policy.json"``. It is trained by the
cross-entropy method (Rubinstein 1999; as in Szita & Lorincz 2006 for Tetris): sample
weight vectors from a Gaussian, score each on the same fresh episodes drawn from
experiments/gym/train.toml (rates, RTTs, buffers, loss, a CUBIC competitor, up to two
step changes of the rate or one of two shipped traces), refit the Gaussian to the best fifth, repeat. The curve is the
mean weight vector's score on 32 fixed episodes of the same distribution after each
iteration: with 8 episodes per candidate it rises over every training seed tried
(docs/FIDELITY-policy.md), where the elite's score on 2 fresh episodes was noise. The
policy kept is the mean that scored best on those validation episodes. An episode's
score is its mean Aurora reward divided by the reward of sending at the bottleneck rate
with no delay or loss (10 x bottleneck packets/s x 0.001), so fast and slow links count
alike; the monitor interval is half the flow's smoothed RTT, as PCC-RL's. ``--reward
vivace-loss`` trains for PCC Vivace's loss-based utility instead (tcplab.gym.rewards:
its loss term scales with the rate sent, where Aurora's stops mattering above ~6
Mbit/s; ``vivace`` adds Vivace's latency term), its score divided by the utility of
the bottleneck rate without loss or RTT gradient.

``--preset orca`` trains Orca's design instead (tcplab.gym.presets.Orca, from Orca's
code): CUBIC underneath, a linear layer with Orca's tanh over its 7 features of the last
10 reports plus a bias, its action scaling CUBIC's window by 4^a every 20 ms (Orca's
report period) from CUBIC's first exit from slow start. Orca's reward is already a
fraction of the episode's largest throughput, so an episode's score is its mean reward.
Its held-out ``cubic`` row is what a do-nothing Orca policy runs (action 0 keeps CUBIC's
window: exactly CUBIC's run).

Evaluation: each seed of experiments/gym/heldout.toml's [evaluation] gives a spec, run
three times with flow 0 as ``policy:FILE`` (the trained policy inside the engine,
starting from the initial window over the first RTT), ``cubic`` and ``bbr`` (plain tcplab.run each). The table gives flow 0's goodput, mean RTT
and retransmission rate. For real work, stable-baselines3 (PPO/SAC with torch) takes the
same environment: see docs/learning.md.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import tcplab
from tcplab.engine import engine
from tcplab.gym import Aurora, CongestionControlEnv, Orca, Scenarios
from tcplab.gym.rewards import REWARDS, ideal_reward
from tcplab.gym.scenarios import describe
from tcplab.specs.load import read_toml

HERE = Path(__file__).resolve().parent
# Beside this script in a copy made by `tcplab examples gym`; in a checkout, in
# experiments/gym (this file is examples/gym_cem.py there, a copy of the shipped one).
GYM = HERE if (HERE / "train.toml").is_file() else HERE.parent / "experiments" / "gym"
TRAIN = GYM / "train.toml"
HELDOUT = GYM / "heldout.toml"
HISTORY = 10
PRESETS = ("aurora", "orca")
ORCA_REPORT_NS = engine().ORCA_REPORT_NS  # Orca's report period, 20 ms (orca-server-mahimahi.cc)


def n_weights(preset: str = "aurora") -> int:
    """The weight vector's length: the observation (Aurora's transformed, with its bias
    input; Orca's 7 features per report) and, for Orca, the layer's bias."""
    return 3 * HISTORY + 1 if preset == "aurora" else 7 * HISTORY + 1


def policy_file(w: np.ndarray, name: str = "cem-linear", preset: str = "aurora") -> dict:
    """The policy as a tcplab policy file (tcplab/policy.py). Aurora: one linear layer
    over the "aurora_log" features (per interval: gradient clipped to [-1, 1], ln(latency
    ratio), ln(1 + sending ratio); then a 1 for the bias). Orca: one layer with Orca's
    tanh over its 70 features as they are, the last weight its bias."""
    if preset == "orca":
        return {
            "format": "tcplab-policy/1",
            "name": name,
            "preset": "orca",
            "history": HISTORY,
            "interval_ns": ORCA_REPORT_NS,
            "transform": "none",
            "layers": [
                {
                    "weights": [list(map(float, w[:-1]))],
                    "bias": [float(w[-1])],
                    "activation": "tanh",
                }
            ],
        }
    return {
        "format": "tcplab-policy/1",
        "name": name,
        "preset": "aurora",
        "history": HISTORY,
        "rtt_fraction": 0.5,
        "transform": "aurora_log",
        "layers": [{"weights": [list(map(float, w))], "bias": [0.0], "activation": "linear"}],
    }


def act(policy, obs: np.ndarray) -> np.ndarray:
    """The action of ``policy`` (tcplab._engine.Policy: the network the engine runs for
    cc = "policy:FILE") for an observation."""
    return np.array([policy.act(obs.tolist())], np.float32)


def make_env(
    scenarios: Scenarios | None = None,
    spec: dict | None = None,
    reward: str = "aurora",
    preset: str = "aurora",
) -> CongestionControlEnv:
    if preset == "orca":
        return CongestionControlEnv(
            scenarios=scenarios, spec=spec, preset=Orca(), interval=ORCA_REPORT_NS / 1e9
        )
    # Episodes start as the deployed policy will (the initial window over the first RTT):
    # no privileged_start_fraction, so what is trained is what runs as policy:FILE.
    return CongestionControlEnv(
        scenarios=scenarios,
        spec=spec,
        preset=Aurora(reward=reward),
        interval="rtt",
        rtt_fraction=0.5,
    )


def episode_score(w: np.ndarray, env: CongestionControlEnv, seed: int) -> float:
    orca = env.preset.name == "orca"
    policy = engine().Policy(json.dumps(policy_file(w, preset=env.preset.name)))
    obs, _ = env.reset(seed=seed)
    rate_bps = env.simulation.config["bottleneck"]["rate_bps"]
    # The bottleneck rate's reward; Orca's reward is a fraction of the largest throughput.
    ideal = 1.0 if orca else ideal_reward(env.preset.reward_name, rate_bps)
    total, n = 0.0, 0
    while True:
        obs, r, term, trunc, _ = env.step(act(policy, obs))
        total, n = total + r, n + 1
        if term or trunc:
            return total / n / ideal


def _score(args: tuple[np.ndarray, list[int], str, str, str]) -> float:
    w, seeds, scenarios_path, reward, preset = args
    env = make_env(Scenarios.load(scenarios_path), reward=reward, preset=preset)
    return float(np.mean([episode_score(w, env, s) for s in seeds]))


def train(
    iterations: int = 25,
    population: int = 32,
    episodes: int = 8,
    workers: int = 2,
    seed: int = 0,
    scenarios: Path = TRAIN,
    say=print,
    validation: int = 0,
    reward: str = "aurora",
    preset: str = "aurora",
    init_std: float = 1.0,
) -> tuple[np.ndarray, list[float]]:
    """Cross-entropy method; returns a weight vector and, per iteration, the elite's mean
    score or, with ``validation`` > 0, the mean weight vector's score on that many fixed
    training-distribution episodes (seeds 1..validation, the same every iteration and
    every training seed): the curve that shows whether the policy improves, without the
    noise of each iteration's fresh episodes. The vector returned is the last mean, or
    with ``validation`` the mean that scored best on it (model selection on episodes of
    the training distribution, never the held-out ones: CEM's mean can step onto a
    flooding policy in its last iterations, docs/FIDELITY-policy.md)."""
    rng = np.random.default_rng(seed)
    n = n_weights(preset)
    mean, std = np.zeros(n), np.full(n, init_std)
    n_elite = max(2, population // 5)
    curve = []
    best = (-np.inf, mean)
    pool = Pool(workers) if workers > 1 else None
    try:
        for it in range(iterations):
            ws = mean + std * rng.standard_normal((population, n))
            # The same training episodes for every candidate of an iteration.
            seeds = [int(s) for s in rng.integers(2**31, size=episodes)]
            jobs = [(w, seeds, str(scenarios), reward, preset) for w in ws]
            scores = np.array(pool.map(_score, jobs) if pool else [_score(j) for j in jobs])
            elite = ws[np.argsort(scores)[-n_elite:]]
            mean, std = elite.mean(axis=0), elite.std(axis=0) + 0.05
            if validation:
                fixed = list(range(1, validation + 1))
                curve.append(_score((mean, fixed, str(scenarios), reward, preset)))
                say(f"iteration {it + 1}/{iterations}: validation score {curve[-1]:.3f}")
                if curve[-1] > best[0]:
                    best = (curve[-1], mean)
            else:
                curve.append(float(np.sort(scores)[-n_elite:].mean()))
                say(f"iteration {it + 1}/{iterations}: elite score {curve[-1]:.3f}")
    finally:
        if pool:
            pool.close()
    return (best[1] if validation else mean), curve


def evaluate(
    w: np.ndarray,
    heldout: Path = HELDOUT,
    seeds: list[int] | None = None,
    preset: str = "aurora",
) -> list[dict]:
    """Flow 0 of each held-out spec as the trained policy (``cc = "policy:FILE"``, run by
    the engine like any algorithm), CUBIC and BBR: plain tcplab.run each."""
    raw = read_toml(heldout)  # tomllib on 3.11+, tomli on 3.10 (tcplab's own reader)
    scenarios = Scenarios.from_dict(raw["scenarios"], heldout.parent)
    seeds = seeds if seeds is not None else raw["evaluation"]["seeds"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.json"
        path.write_text(json.dumps(policy_file(w, preset=preset)))
        for seed in seeds:
            spec = scenarios.sample(seed, "cubic")
            where = describe(spec)
            for cc in (f"policy:{path}", "cubic", "bbr"):
                spec["flows"][0]["cc"] = cc
                f0 = tcplab.run(spec, report=False).summary.iloc[0]
                rows.append(
                    {
                        "scenario": where,
                        "algorithm": f0["cc"],
                        "goodput_mbps": round(f0["goodput_bps"] / 1e6, 2),
                        "mean_rtt_ms": round(float(f0["mean_rtt_ms"]), 1),
                        "retransmission_rate": round(float(f0["retransmission_rate"]), 4),
                    }
                )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=25)
    ap.add_argument("--population", type=int, default=32)
    ap.add_argument("--episodes", type=int, default=8, help="per candidate and iteration")
    ap.add_argument(
        "--validation", type=int, default=32, help="fixed episodes the curve is scored on"
    )
    ap.add_argument("--seed", type=int, default=0, help="the training seed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("-o", "--out", type=Path, default=None, help="write the weights as JSON")
    ap.add_argument(
        "--reward", choices=REWARDS, default="aurora", help="the reward trained for (Aurora's)"
    )
    ap.add_argument(
        "--preset", choices=PRESETS, default="aurora", help="the design trained (Aurora's)"
    )
    ap.add_argument(
        "--init-std",
        type=float,
        default=1.0,
        help="the first sampling Gaussian's standard deviation (its mean is 0: do-nothing)",
    )
    ap.add_argument(
        "--eval-seeds",
        type=int,
        nargs="+",
        default=None,
        help="held-out seeds to evaluate (default: heldout.toml's [evaluation] seeds)",
    )
    a = ap.parse_args()
    if a.preset == "orca" and a.reward != "aurora":
        ap.error("--reward: Orca trains for its own reward; --reward applies to --preset aurora")
    w, _ = train(
        a.iterations,
        a.population,
        a.episodes,
        a.workers,
        a.seed,
        validation=a.validation,
        reward=a.reward,
        preset=a.preset,
        init_std=a.init_std,
    )
    if a.out:  # run it with cc = "policy:FILE" in any spec
        a.out.write_text(json.dumps(policy_file(w, preset=a.preset), indent=1) + "\n")
    import pandas as pd

    rows = evaluate(w, seeds=a.eval_seeds, preset=a.preset)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
