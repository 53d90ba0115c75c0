"""``CongestionControlEnv``: a Gymnasium environment over the stepping engine.

Each episode is one simulation: a fixed spec (``spec=``) or a spec drawn from a
distribution (``scenarios=``, :class:`tcplab.gym.scenarios.Scenarios` or a TOML path)
with the episode's seed, so (scenarios, seed) give the same episode, step for step.
``env.episode_spec`` is the episode's spec (a dictionary; ``tcplab.specs.tomlout`` writes
it as TOML for a plain ``tcplab run``), ``env.simulation`` the running simulation
(``finish(out)`` writes its run directory).

A step writes the action into the controlled flow (``flow``, default 0), advances the
simulation by the control interval and returns the preset's observation and reward.
The interval is fixed (``interval="10ms"`` or seconds as a float) or per RTT
(``interval="rtt"``: ``rtt_fraction`` x the flow's srtt, the path's base RTT before the
first sample). An episode ends by truncation when the spec's duration is reached
(``terminated`` is never set: congestion control has no terminal state).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from tcplab.errors import SpecError
from tcplab.gym.presets import PRESETS, Preset
from tcplab.gym.scenarios import Scenarios
from tcplab.gym.simulation import Simulation, SpecLike, as_spec
from tcplab.specs.units import parse_time


class CongestionControlEnv(gymnasium.Env):
    """See the module docs. Arguments: ``scenarios`` or ``spec`` (exactly one; a spec's
    controlled flow must run the preset's ``controlled_cc``), ``preset`` ("aurora",
    "orca" or a :class:`~tcplab.gym.presets.Preset`), ``interval``, ``rtt_fraction``,
    ``flow``."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenarios: Scenarios | str | Path | None = None,
        spec: SpecLike | None = None,
        preset: str | Preset = "aurora",
        interval: str | float = "10ms",
        rtt_fraction: float = 1.0,
        flow: int = 0,
    ) -> None:
        if (scenarios is None) == (spec is None):
            raise SpecError([("scenarios", "give exactly one of scenarios= and spec=")])
        if isinstance(scenarios, (str, Path)):
            scenarios = Scenarios.load(scenarios)
        self.scenarios = scenarios
        self.base_spec = as_spec(spec) if spec is not None else None
        if isinstance(preset, str):
            if preset not in PRESETS:
                raise SpecError([("preset", f"unknown {preset!r}; known: {', '.join(PRESETS)}")])
            preset = PRESETS[preset]()
        self.preset = preset
        self.observation_space = preset.observation_space
        self.action_space = preset.action_space
        if interval == "rtt":
            self.interval_ns: int | None = None
        elif isinstance(interval, str):
            self.interval_ns = parse_time(interval)
        else:
            self.interval_ns = round(float(interval) * 1e9)
        if self.interval_ns is not None and self.interval_ns <= 0:
            raise SpecError([("interval", f"must be > 0 or 'rtt'; got {interval!r}")])
        if not rtt_fraction > 0:
            raise SpecError([("rtt_fraction", f"must be > 0; got {rtt_fraction}")])
        self.rtt_fraction = rtt_fraction
        self.flow = flow
        self.simulation: Simulation | None = None
        self.episode_spec: dict[str, Any] | None = None

    # -- episodes --------------------------------------------------------------------
    def _episode_spec(self, seed: int) -> dict[str, Any]:
        if self.scenarios is not None:
            return self.scenarios.sample(seed, self.preset.controlled_cc)
        assert self.base_spec is not None
        d = self.base_spec.to_dict()
        d.setdefault("experiment", {})["seed"] = seed
        return d

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(2**31))
        self.episode_spec = self._episode_spec(episode_seed)
        self.simulation = sim = Simulation(self.episode_spec)
        cc = sim.cc(self.flow)
        if cc != self.preset.controlled_cc:
            raise SpecError(
                [
                    (
                        f"flows[{self.flow}].cc",
                        f"the {self.preset.name} preset controls a {self.preset.controlled_cc!r} "
                        f"flow; this one runs {cc!r}",
                    )
                ]
            )
        # Before the first RTT sample an "rtt" interval uses the flow's two-way propagation
        # delay, as an in-engine policy does (crates/sim/src/world/agent.rs base_rtt_ns).
        f, b = sim.config["flows"][self.flow], sim.config["bottleneck"]
        self._base_rtt_ns = 2 * (
            f["sender_access"]["delay_ns"] + b["delay_ns"] + f["receiver_access"]["delay_ns"]
        )
        self.preset.reset(sim, self.flow, self.np_random)
        obs, _ = self._advance()
        return obs, self._info()

    def _next_ns(self) -> int:
        sim = self.simulation
        assert sim is not None
        if self.interval_ns is not None:
            step = self.interval_ns
        else:
            srtt_us = sim.state(self.flow).srtt_us
            rtt_ns = srtt_us * 1000 if srtt_us > 0 else self._base_rtt_ns
            # Rust's f64::round (half away from zero), as the in-engine agent rounds.
            step = max(1_000_000, math.floor(self.rtt_fraction * rtt_ns + 0.5))
        return sim._s.now_ns + step

    def _advance(self) -> tuple[np.ndarray, float]:
        sim = self.simulation
        assert sim is not None
        self._done = sim.advance_ns(self._next_ns())
        iv = sim.interval(self.flow)
        st = sim.state(self.flow)
        self._last = (iv, st)
        obs = self.preset.observe(iv, st)
        return obs, float(self.preset.reward(iv, st))

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.simulation is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset()")
        self.preset.act(self.simulation, self.flow, np.asarray(action))
        obs, reward = self._advance()
        return obs, reward, False, self._done, self._info()

    def _info(self) -> dict[str, Any]:
        iv, st = self._last
        return {
            "time_s": st.now_us / 1e6,
            "cwnd_pkts": st.cwnd_pkts,
            "throughput_bps": iv.acked_bytes * 8e6 / iv.duration_us if iv.duration_us else 0.0,
            "rtt_mean_us": iv.rtt_mean_us,
            "lost_pkts": iv.lost_pkts,
            **self.preset.info(),
        }

    def finish(self, out: str | Path | None = None, **kw: Any) -> Any:
        """Run the episode's simulation to its end and return its Result (written to
        ``out`` as a run directory when given)."""
        if self.simulation is None:
            raise RuntimeError("no episode: call reset()")
        sim, self.simulation = self.simulation, None
        return sim.finish(out, **kw)
