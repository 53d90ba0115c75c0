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
(``interval="rtt"``: ``rtt_fraction`` x the flow's srtt), at least 1 ms either way (the
engine's ``MIN_STEP_NS``, a policy file's floor) and no longer than the episode
(checked at ``reset()``). An episode ends by truncation when the spec's duration is
reached (``terminated`` is never set: congestion control has no terminal state).

``reset()`` starts an episode as a deployed policy starts (crates/controllers/src/
policy/mod.rs): the preset's ``reset`` writes what the flow sends before it knows anything of
the path (Aurora: TCP's initial window), the simulation runs in 1 ms looks until the
flow has its first RTT sample (the handshake's), what happened meanwhile is dropped, the
preset's ``start`` writes the initial control, and the first observation is of the
interval after it. Nothing the environment gives the preset reads the path's
configuration, except a preset's explicitly privileged training options (Aurora's
``privileged_start_fraction``), which ``info`` and ``finish``'s summary.json name.

Bad arguments raise ValueError (:class:`~tcplab.errors.SpecError` for the constructor's)
naming the argument: an action of the wrong shape or not finite, an interval below 1 ms,
longer than the episode or not finite, a flow the episode does not have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from tcplab.engine import engine
from tcplab.errors import SpecError
from tcplab.gym.flow_driver import FlowDriver, interval_ns
from tcplab.gym.flow_driver import rtt_fraction as rtt_fraction_of
from tcplab.gym.presets import PRESETS, Preset
from tcplab.gym.scenarios import Scenarios
from tcplab.gym.simulation import Simulation, SpecLike, as_spec


class CongestionControlEnv(gymnasium.Env):
    """See the module docs. Arguments: ``scenarios`` or ``spec`` (at most one; neither
    means ``Scenarios()``, its defaults; a spec's controlled flow must run the preset's
    ``controlled_cc``), ``preset`` ("aurora",
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
        if scenarios is not None and spec is not None:
            raise SpecError([("scenarios", "give at most one of scenarios= and spec=")])
        if scenarios is None and spec is None:
            # gymnasium.make(ENV_ID) with no arguments: Scenarios' documented defaults
            # (10-100 Mbit/s, 20-80 ms, 0.5-2 BDP, one flow, 5 s episodes).
            scenarios = Scenarios()
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
        self._min_step_ns = int(engine().POLICY_MIN_STEP_NS)
        self.interval_ns = interval_ns(interval, self._min_step_ns)
        self.interval = interval
        self.rtt_fraction = rtt_fraction_of(rtt_fraction)
        if isinstance(flow, bool) or not isinstance(flow, (int, np.integer)) or flow < 0:
            raise SpecError([("flow", f"must be a flow index >= 0; got {flow!r}")])
        self.flow = int(flow)
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
        if self.flow >= sim.n_flows:
            raise SpecError(
                [("flow", f"{self.flow} is not a flow of the episode (flows 0..{sim.n_flows})")]
            )
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
        if self.interval_ns is not None and self.interval_ns > sim._s.end_ns:
            raise SpecError(
                [
                    (
                        "interval",
                        f"{self.interval!r} is longer than the episode "
                        f"({sim._s.end_ns / 1e9:g} s): no step would end inside it",
                    )
                ]
            )
        self._driver = d = FlowDriver(
            self.preset, self.flow, self.interval_ns, self.rtt_fraction, self._min_step_ns
        )
        d.begin(sim, self.np_random)
        # As a deployed policy (policy/mod.rs PolicyAgent::step): look every MIN_STEP_NS for the
        # preset's start (Aurora: the flow's first RTT sample), drop what happened until
        # then, start.
        while not d.ready(sim):
            if sim.advance_ns(d.next_ns(sim)):
                raise SpecError(
                    [
                        (
                            f"flows[{self.flow}]",
                            f"the episode ended before {self.preset.waits_for}: nothing "
                            "to start from (an earlier start or a longer duration)",
                        )
                    ]
                )
        d.start(sim, self.np_random)
        obs, _ = self._advance()
        return obs, self._info()

    def _advance(self) -> tuple[np.ndarray, float]:
        sim = self.simulation
        assert sim is not None
        self._done = sim.advance_ns(self._driver.next_ns(sim))
        return self._driver.observe(sim)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.simulation is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset()")
        self._driver.act(self.simulation, action)
        obs, reward = self._advance()
        return obs, reward, False, self._done, self._info()

    def _info(self) -> dict[str, Any]:
        assert self._driver.last is not None
        iv, st = self._driver.last
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
        sim.privileged = self.preset.privileged()
        return sim.finish(out, **kw)
