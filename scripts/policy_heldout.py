"""The held-out comparison of issue 38: a do-nothing policy (every weight 0), the trained
example policy (experiments/gym/cem-linear.json), CUBIC and BBR as flow 0 of each
held-out spec (experiments/gym/heldout.toml's scenarios, the seeds given), in the
simulator.

    python scripts/policy_heldout.py [--seeds 1001-1012] [--json out.json]

Per spec and algorithm, one deployed run (``tcplab.run``, the policy as
``cc = "policy:FILE"`` inside the engine) gives the link's utilisation and flow 0's
goodput, mean RTT and retransmission rate; a second, stepped run gives flow 0's Aurora
reward: the mean over monitor intervals of half the flow's srtt (PCC-RL's interval, as
examples/gym_cem.py trains) of ``tcplab._engine.aurora_reward``, over the reward of
sending at the bottleneck rate with no delay or loss (gym_cem.py's score), and the same
of PCC Vivace's utility without and with its latency term (columns ``vivace_loss`` and
``vivace``; tcplab.gym.rewards, ``gym_cem.py --reward vivace-loss | vivace``). A policy's
stepped run is the environment's (``CongestionControlEnv`` with the policy's actions,
the run ``policy:FILE`` makes, tests/gym/test_gym_env.py); CUBIC's and BBR's is a
``Simulation`` read at the same intervals. Prints per-algorithm medians and per-spec rows.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HELDOUT = ROOT / "experiments" / "gym" / "heldout.toml"
TRAINED = ROOT / "experiments" / "gym" / "cem-linear.json"
MIN_STEP_NS = 1_000_000  # the RTT interval's floor (crates/controllers/src/policy/mod.rs)


def seeds_arg(text: str) -> list[int]:
    if "-" in text:
        lo, hi = (int(x) for x in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(",")]


def do_nothing(history: int = 10) -> dict[str, Any]:
    """A policy whose action is always 0: its rate stays where it starts."""
    return {
        "format": "tcplab-policy/1",
        "name": "do-nothing",
        "preset": "aurora",
        "history": history,
        "rtt_fraction": 0.5,
        "transform": "aurora_log",
        "layers": [{"weights": [[0.0] * (3 * history + 1)], "bias": [0.0]}],
    }


def trained() -> dict[str, Any]:
    p = json.loads(TRAINED.read_text())
    p.pop("start_fraction", None)  # 0.7.1's field (1.0, its default there)
    return p


def aurora_preset(history: int) -> Any:
    """The Aurora preset as a deployed policy starts (before issue 38's change, 0.7.1 started
    a policy file at its start_fraction, 1.0 x the bottleneck rate by default)."""
    from tcplab.gym import Aurora

    if "start_fraction" in inspect.signature(Aurora).parameters:
        return Aurora(history=history, start_fraction=1.0)
    return Aurora(history=history)


def policy_reward(
    policy: dict[str, Any], spec: dict[str, Any], rate_bps: float
) -> tuple[float, float, float]:
    """(Aurora's, Vivace-Loss's, Vivace's score) of the policy's stepped run."""
    from tcplab.engine import engine
    from tcplab.gym import CongestionControlEnv
    from tcplab.gym.rewards import VivaceReward

    spec = copy.deepcopy(spec)
    spec["flows"][0]["cc"] = "external"
    net = engine().Policy(json.dumps(policy))
    preset = aurora_preset(policy["history"])
    vivaces, utilities = (VivaceReward(latency=False), VivaceReward()), ([], [])
    aurora_reward = preset.reward

    def both(iv: Any, st: Any) -> float:  # Vivace's utilities of the same intervals
        for v, u in zip(vivaces, utilities):
            u.append(v(iv, st.srtt_us))
        return aurora_reward(iv, st)

    preset.reward = both
    env = CongestionControlEnv(
        spec=spec, preset=preset, interval="rtt", rtt_fraction=policy["rtt_fraction"]
    )
    obs, _ = env.reset(seed=spec["experiment"]["seed"])
    rewards = []
    while True:
        obs, r, _, trunc, _ = env.step([net.act([float(x) for x in obs])])
        rewards.append(r)
        if trunc:
            return scores(rewards, utilities, rate_bps)


def native_reward(cc: str, spec: dict[str, Any], rate_bps: float) -> tuple[float, float, float]:
    """(Aurora's, Vivace-Loss's, Vivace's score) of a native algorithm's run."""
    from tcplab.engine import engine
    from tcplab.gym import Simulation
    from tcplab.gym.rewards import VivaceReward

    spec = copy.deepcopy(spec)
    spec["flows"][0]["cc"] = cc
    sim = Simulation(spec)
    eng = engine()
    rewards, vivaces, utilities = [], (VivaceReward(latency=False), VivaceReward()), ([], [])
    while not sim.done:
        srtt_us = sim.state(0).srtt_us
        step = max(MIN_STEP_NS, round(0.5 * srtt_us * 1000)) if srtt_us > 0 else MIN_STEP_NS
        sim.advance_ns(sim._s.now_ns + step)
        st = sim.state(0)
        iv = sim.interval(0)
        if st.srtt_us > 0:  # intervals after the first RTT sample, as a policy's
            rewards.append(eng.aurora_reward(tuple(iv), st.srtt_us))
            for v, u in zip(vivaces, utilities):
                u.append(v(iv, st.srtt_us))
    return scores(rewards, utilities, rate_bps)


def scores(
    rewards: list[float], utilities: tuple[list[float], list[float]], rate_bps: float
) -> tuple[float, float, float]:
    """Mean Aurora reward and mean Vivace-Loss and Vivace utilities, each over its value
    at the bottleneck rate without delay or loss (tcplab.gym.rewards.ideal_reward)."""
    from tcplab.gym.rewards import ideal_reward

    vivace_ideal = ideal_reward("vivace", rate_bps)
    return (
        statistics.fmean(rewards) / ideal_reward("aurora", rate_bps),
        statistics.fmean(utilities[0]) / vivace_ideal,
        statistics.fmean(utilities[1]) / vivace_ideal,
    )


def deployed(cc: str, spec: dict[str, Any]) -> dict[str, float]:
    import tcplab

    spec = copy.deepcopy(spec)
    spec["flows"][0]["cc"] = cc
    r = tcplab.run(spec, report=False)
    f0 = r.summary.iloc[0]
    return {
        "utilization": float(r.aggregate["utilization"]),
        "goodput_mbps": float(f0["goodput_bps"]) / 1e6,
        "mean_rtt_ms": float(f0["mean_rtt_ms"]),
        "retransmission_rate": float(f0["retransmission_rate"]),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("1001-1012"))
    ap.add_argument("--json", type=Path, default=None, help="write every row as JSON")
    ap.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="also evaluate this policy file (repeatable); default: the shipped cem-linear",
    )
    a = ap.parse_args(argv)
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from tcplab.gym import Scenarios
    from tcplab.gym.scenarios import describe

    scenarios = Scenarios.from_dict(tomllib.loads(HELDOUT.read_text())["scenarios"], HELDOUT.parent)
    policies = {"do-nothing": do_nothing(), "cem-linear": trained()}
    for item in a.policy:
        name, _, path = item.partition("=")
        policies[name] = json.loads(Path(path).read_text())
    names = [*policies, "cubic", "bbr"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, p in policies.items():
            files[name] = Path(tmp) / f"{name}.json"
            files[name].write_text(json.dumps(p))
        for seed in a.seeds:
            spec = scenarios.sample(seed, "cubic")
            rate_bps = bottleneck_bps(spec)
            where = describe(spec)
            for name in names:
                if name in policies:
                    row = deployed(f"policy:{files[name]}", spec)
                    row["reward"], row["vivace_loss"], row["vivace"] = policy_reward(
                        policies[name], spec, rate_bps
                    )
                else:
                    row = deployed(name, spec)
                    row["reward"], row["vivace_loss"], row["vivace"] = native_reward(
                        name, spec, rate_bps
                    )
                rows.append({"seed": seed, "spec": where, "algorithm": name, **row})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    keys = ("utilization", "goodput_mbps", "mean_rtt_ms", "retransmission_rate")
    keys += ("reward", "vivace_loss", "vivace")
    print(f"medians over {len(a.seeds)} held-out specs (seeds {a.seeds[0]}-{a.seeds[-1]}):")
    print("| algorithm | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for name in names:
        mine = [r for r in rows if r["algorithm"] == name]
        cells = [f"{statistics.median(r[k] for r in mine):.3f}" for k in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


def bottleneck_bps(spec: dict[str, Any]) -> float:
    """The bottleneck rate (bit/s) of a spec, as the engine config has it."""
    from tcplab.lowering import resolve, world_config
    from tcplab.specs.load import as_spec

    return float(world_config(resolve(as_spec(spec)))["bottleneck"]["rate_bps"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
