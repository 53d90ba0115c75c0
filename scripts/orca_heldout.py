"""Orca policies on the held-out specs: each policy file given (``gym_cem.py --preset
orca -o FILE``) and the do-nothing Orca policy (action 0 keeps CUBIC's window: CUBIC's
run exactly, tests/gym/test_orca_policy.py) as flow 0 of each held-out spec
(experiments/gym/heldout.toml, the seeds given), in the simulator.

    python scripts/orca_heldout.py NAME=FILE [NAME=FILE ...] [--seeds 1001-1012]

Per spec and policy one stepped run (``CongestionControlEnv`` with the Orca preset at
Orca's 20 ms reports, the run ``policy:FILE`` makes) gives flow 0's mean Orca reward
over its reports, the mean of its first feature (the report's throughput over the
episode's largest so far) and, from the finished run, flow 0's goodput, mean RTT and
retransmission rate. Prints per-policy medians and, per policy, on how many specs its
reward beats the do-nothing policy's (CUBIC's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HELDOUT = ROOT / "experiments" / "gym" / "heldout.toml"
sys.path.insert(0, str(ROOT / "scripts"))
from policy_heldout import seeds_arg  # noqa: E402


def do_nothing(history: int = 10) -> dict[str, Any]:
    """An Orca policy whose action is always 0 (tanh(0)): CUBIC's window kept."""
    from tcplab.engine import engine

    return {
        "format": "tcplab-policy/1",
        "name": "do-nothing",
        "preset": "orca",
        "history": history,
        "interval_ns": engine().ORCA_REPORT_NS,
        "transform": "none",
        "layers": [{"weights": [[0.0] * (7 * history)], "bias": [0.0], "activation": "tanh"}],
    }


def stepped(policy: dict[str, Any], spec: dict[str, Any]) -> dict[str, float]:
    from tcplab.engine import engine
    from tcplab.gym import CongestionControlEnv, Orca

    net = engine().Policy(json.dumps(policy))
    # At the policy's own interval (Orca's 20 ms reports for gym_cem.py's files).
    env = CongestionControlEnv(
        spec=spec, preset=Orca(history=policy["history"]), interval=policy["interval_ns"] / 1e9
    )
    obs, _ = env.reset(seed=spec["experiment"]["seed"])
    rewards, thr_ratio = [], []
    while True:
        obs, r, _, trunc, _ = env.step([net.act([float(x) for x in obs])])
        rewards.append(r)
        thr_ratio.append(float(obs[-7]))  # the newest report's throughput / max
        if trunc:
            break
    f0 = env.finish().summary.iloc[0]
    return {
        "reward": statistics.fmean(rewards),
        "thr_over_max": statistics.fmean(thr_ratio),
        "goodput_mbps": float(f0["goodput_bps"]) / 1e6,
        "mean_rtt_ms": float(f0["mean_rtt_ms"]),
        "retransmission_rate": float(f0["retransmission_rate"]),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("policy", nargs="+", metavar="NAME=FILE")
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("1001-1012"))
    a = ap.parse_args(argv)
    from tcplab.gym import Scenarios
    from tcplab.gym.scenarios import describe
    from tcplab.specs.load import read_toml

    scenarios = Scenarios.from_dict(read_toml(HELDOUT)["scenarios"], HELDOUT.parent)
    policies = {"do-nothing": do_nothing()}
    for item in a.policy:
        name, _, path = item.partition("=")
        policies[name] = json.loads(Path(path).read_text())
    rows = []
    for seed in a.seeds:
        spec = scenarios.sample(seed, "cubic")
        for name, p in policies.items():
            rows.append({"seed": seed, "spec": describe(spec), "policy": name, **stepped(p, spec)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    keys = ("reward", "thr_over_max", "goodput_mbps", "mean_rtt_ms", "retransmission_rate")
    print(f"medians over {len(a.seeds)} held-out specs (seeds {a.seeds[0]}-{a.seeds[-1]}):")
    print("| policy | " + " | ".join(keys) + " | reward beats do-nothing |")
    print("|---" * (len(keys) + 2) + "|")
    base = {r["seed"]: r["reward"] for r in rows if r["policy"] == "do-nothing"}
    for name in policies:
        mine = [r for r in rows if r["policy"] == name]
        cells = [f"{statistics.median(r[k] for r in mine):.3f}" for k in keys]
        wins = sum(r["reward"] > base[r["seed"]] for r in mine)
        print(f"| {name} | " + " | ".join(cells) + f" | {wins}/{len(mine)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
