"""Learning-based congestion control on tcplab's engine: the stepping engine
(:class:`Simulation`), spec distributions (:class:`Scenarios`), published designs as
presets (:mod:`tcplab.gym.presets`: Aurora, Orca) and a Gymnasium environment
(:class:`CongestionControlEnv`, registered as ``tcplab/CongestionControl-v0``).

Needs gymnasium (``pip install 'tcplab[gym]'``); the stepping engine alone
(:mod:`tcplab.gym.simulation`) does not. A policy trained on the Aurora preset runs
inside the engine as ``cc = "policy:FILE"`` (:mod:`tcplab.policy`).

Vectorised environments are gymnasium's: ``gymnasium.make_vec(ENV_ID, num_envs=4,
vectorization_mode="async", scenarios=...)`` (one process each); beyond one machine,
RLlib takes the same environment (``ray.tune.register_env``), on the Ray cluster the
``ray`` extra already serves sweeps.
"""

from __future__ import annotations

import gymnasium

from tcplab.gym.env import CongestionControlEnv
from tcplab.gym.presets import PRESETS, Aurora, Orca, Preset
from tcplab.gym.scenarios import Scenarios
from tcplab.gym.simulation import Simulation

ENV_ID = "tcplab/CongestionControl-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="tcplab.gym.env:CongestionControlEnv")

__all__ = [
    "ENV_ID",
    "PRESETS",
    "Aurora",
    "CongestionControlEnv",
    "Orca",
    "Preset",
    "Scenarios",
    "Simulation",
]
