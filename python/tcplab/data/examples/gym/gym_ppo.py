"""Train an Aurora-style policy with stable-baselines3's PPO, export its actor to ONNX and
deploy it with cc = "policy:FILE.onnx".

    pip install 'tcplab[rl]'        # torch (a CUDA build: ~5 GB), stable-baselines3, onnx
    python examples/gym_ppo.py [--timesteps 100000] [--seed 0] [-o policy.onnx]
                               [--eval-seed 1001] [--reward aurora|vivace-loss|vivace]
    tcplab examples gym && python gym/gym_ppo.py ...      (from an installed tcplab)

Training: PPO (Schulman et al. 2017; stable-baselines3's ``MlpPolicy``, its default
actor-critic of two 64-unit Tanh layers each, its default hyperparameters) on
``tcplab.gym``'s Aurora preset (the last 10 monitor intervals' latency gradient, latency
ratio and sending ratio; action in [-10, 10], a rate change of up to 25 % per interval)
over experiments/gym/train.toml's scenarios, the monitor interval half the flow's
smoothed RTT, episodes starting as the deployed policy starts (the initial window over
the first RTT): the environment gym_cem.py trains on. ``--reward vivace-loss`` trains
for PCC Vivace's loss-based utility instead (tcplab.gym.rewards), as gym_cem.py's
option does.

Export: the actor's deterministic action, observation -> action mean -> clipped to the
action space as SB3's ``predict(deterministic=True)`` clips it, is written by
``torch.onnx.export`` (Flatten, Gemm, Tanh, Clip: ops the engine's ONNX reader
translates, tcplab/onnx_policy.py) with the policy fields as ``tcplab.*`` metadata.
The engine then runs it inside the simulator (or beside Linux TCP on the kernel
backend) with no Python and no torch: tests/gym/test_torch_export.py holds the engine's
actions equal to torch's to 1e-6.

Evaluation: held-out spec ``--eval-seed`` of experiments/gym/heldout.toml with flow 0 as
the exported policy and as CUBIC (plain ``tcplab.run`` each); the table gives the link's
utilisation by flow 0, its mean RTT and retransmission rate. What this budget learns is
recorded in docs/FIDELITY-policy.md: a few CPU minutes of PPO is a demonstration of the
path (train, export, deploy), not a trained congestion controller.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import tcplab
from tcplab.gym import Aurora, CongestionControlEnv, Scenarios
from tcplab.gym.rewards import REWARDS
from tcplab.specs.load import read_toml

HERE = Path(__file__).resolve().parent
# Beside this script in a copy made by `tcplab examples gym`; in a checkout, in
# experiments/gym (this file is examples/gym_ppo.py there, a copy of the shipped one).
GYM = HERE if (HERE / "train.toml").is_file() else HERE.parent / "experiments" / "gym"
TRAIN = GYM / "train.toml"
HELDOUT = GYM / "heldout.toml"
HISTORY = 10
RTT_FRACTION = 0.5  # PCC-RL's monitor interval: half the smoothed RTT (as gym_cem.py)


def make_env(scenarios: Scenarios | None = None, reward: str = "aurora") -> CongestionControlEnv:
    # No privileged_start_fraction: what is trained is what runs as policy:FILE.
    return CongestionControlEnv(
        scenarios=scenarios if scenarios is not None else Scenarios.load(TRAIN),
        preset=Aurora(history=HISTORY, reward=reward),
        interval="rtt",
        rtt_fraction=RTT_FRACTION,
    )


def actor(model):
    """The deterministic actor of an SB3 PPO ``model`` as a torch module: features ->
    policy MLP -> action mean, clipped to the action space (SB3's
    ``predict(deterministic=True)``: the Gaussian's mean, then ``np.clip``)."""
    import torch

    policy = model.policy
    low = float(model.action_space.low[0])
    high = float(model.action_space.high[0])

    class Actor(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = policy.pi_features_extractor  # Flatten for a Box observation
            self.body = policy.mlp_extractor.policy_net
            self.head = policy.action_net

        def forward(self, obs):
            return torch.clamp(self.head(self.body(self.features(obs))), low, high)

    return Actor().eval()


def export(model, path: Path, name: str = "ppo-aurora", dynamo: bool = False) -> Path:
    """Write ``model``'s actor as ONNX with the policy fields as metadata
    (tcplab/onnx_policy.py). ``dynamo=False``: torch's TorchScript exporter, which needs
    no onnxscript; the dynamo exporter (torch's default since 2.9) gives the same ops."""
    import onnx
    import torch

    n_obs = int(np.prod(model.observation_space.shape))
    with torch.no_grad(), warnings.catch_warnings():
        # torch >= 2.9 calls the TorchScript exporter deprecated; it still writes the
        # same graph (tests/gym/test_torch_export.py runs both exporters).
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            actor(model),
            (torch.zeros(1, n_obs),),
            str(path),
            input_names=["obs"],
            output_names=["action"],
            dynamo=dynamo,
        )
    m = onnx.load(str(path))
    onnx.helper.set_model_props(
        m,
        {
            "tcplab.name": name,
            "tcplab.preset": "aurora",
            "tcplab.history": str(HISTORY),
            "tcplab.transform": "none",  # the raw observation, as the environment gives it
            "tcplab.rtt_fraction": str(RTT_FRACTION),
        },
    )
    onnx.save(m, str(path))
    return path


def train(timesteps: int, seed: int, reward: str = "aurora"):
    from stable_baselines3 import PPO

    env = make_env(reward=reward)
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0)
    model.learn(total_timesteps=timesteps)
    return model


def evaluate(path: Path, seed: int) -> list[dict]:
    """Flow 0 of held-out spec ``seed`` as the exported policy and as CUBIC."""
    raw = read_toml(HELDOUT)
    spec = Scenarios.from_dict(raw["scenarios"]).sample(seed, "cubic")
    rate_bps = _bottleneck_bps(spec)  # the configured rate (its first, if it changes)
    rows = []
    for cc in (f"policy:{path}", "cubic"):
        spec["flows"][0]["cc"] = cc
        f0 = tcplab.run(spec, report=False).summary.iloc[0]
        rows.append(
            {
                "algorithm": f0["cc"],
                "utilisation": round(float(f0["goodput_bps"]) / rate_bps, 3),
                "goodput_mbps": round(float(f0["goodput_bps"]) / 1e6, 2),
                "mean_rtt_ms": round(float(f0["mean_rtt_ms"]), 1),
                "retransmission_rate": round(float(f0["retransmission_rate"]), 4),
            }
        )
    return rows


def _bottleneck_bps(spec: dict) -> float:
    from tcplab.lowering import resolve, world_config
    from tcplab.specs.load import as_spec

    return float(world_config(resolve(as_spec(spec)))["bottleneck"]["rate_bps"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int, default=100_000, help="PPO environment steps")
    ap.add_argument("--seed", type=int, default=0, help="the training seed")
    ap.add_argument("--eval-seed", type=int, default=1001, help="the held-out spec's seed")
    ap.add_argument(
        "--reward", choices=REWARDS, default="aurora", help="the reward trained for (Aurora's)"
    )
    ap.add_argument("-o", "--out", type=Path, default=None, help="keep the ONNX policy here")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)  # small networks: threads cost more than they give
    t0 = time.process_time()
    model = train(a.timesteps, a.seed, a.reward)
    print(f"trained {a.timesteps} steps in {time.process_time() - t0:.0f} CPU-s")
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        path = export(model, a.out or Path(tmp) / "ppo-aurora.onnx")
        print(pd.DataFrame(evaluate(path, a.eval_seed)).to_string(index=False))


if __name__ == "__main__":
    main()
