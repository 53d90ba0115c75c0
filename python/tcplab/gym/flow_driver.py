"""One flow driven by a preset between the engine's steps: the start rule, the interval,
the observation and reward, and the checked action, as
:class:`tcplab.gym.CongestionControlEnv` trains with and as a ``preset:FILE.py`` run
(:mod:`tcplab.gym.preset_run`) deploys. The caller owns the clock: it advances the
simulation and calls the driver when the driver's time comes (:meth:`FlowDriver.next_ns`),
so that one simulation can carry several driven flows.

The cycle of one flow, as a deployed policy's (crates/controllers/src/policy/mod.rs
``PolicyAgent::step``): ``begin`` (the preset's ``reset``: what the flow sends before it
knows anything of the path); every ``min_step_ns`` a look at ``ready`` (Aurora: the flow
has its first RTT sample; Orca: CUBIC has left slow start); once ready, ``start``: what
happened until then is dropped and the preset writes its initial control; then every
interval ``observe`` (the interval's statistics, read once) and ``act``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tcplab.errors import SpecError
from tcplab.gym.presets import Preset
from tcplab.gym.simulation import FlowState, Interval, Simulation
from tcplab.specs.units import parse_time


def interval_ns(interval: str | float, min_ns: int, field: str = "interval") -> int | None:
    """The fixed interval in ns (None for "rtt"), at least ``min_ns``; SpecError naming
    ``field`` otherwise."""
    if interval == "rtt":
        return None
    bad = f"must be 'rtt' or a duration of at least {min_ns / 1e6:g} ms"
    try:
        if isinstance(interval, str):
            ns = parse_time(interval)
        else:
            x = float(interval)
            if not math.isfinite(x):
                raise ValueError("not finite")
            ns = round(x * 1e9)
    except (TypeError, ValueError) as exc:
        raise SpecError([(field, f"{bad} (seconds or '10ms'); got {interval!r}: {exc}")]) from None
    if ns < min_ns:
        raise SpecError([(field, f"{bad} (the floor of an interval per RTT); got {interval!r}")])
    return ns


def rtt_fraction(value: Any, field: str = "rtt_fraction") -> float:
    """``value`` as an RTT fraction in (0, 100]; SpecError naming ``field`` otherwise."""
    if isinstance(value, bool) or not (isinstance(value, numbers.Real) and 0 < value <= 100):
        raise SpecError([(field, f"must be in (0, 100]; got {value!r}")])
    return float(value)


class FlowDriver:
    """Flow ``flow`` of a simulation, driven by ``preset`` every ``interval_ns`` (None:
    ``fraction`` x the flow's srtt), never more often than ``min_step_ns``."""

    def __init__(
        self,
        preset: Preset,
        flow: int,
        interval_ns: int | None,
        fraction: float,
        min_step_ns: int,
    ) -> None:
        self.preset = preset
        self.flow = flow
        self.interval_ns = interval_ns
        self.fraction = fraction
        self.min_step_ns = min_step_ns
        self.started = False
        self.last: tuple[Interval, FlowState] | None = None

    def begin(self, sim: Simulation, rng: np.random.Generator) -> None:
        self.started = False
        self.last = None
        self.preset.reset(sim, self.flow, rng)

    def ready(self, sim: Simulation) -> bool:
        return bool(self.preset.ready(sim.state(self.flow)))

    def start(self, sim: Simulation, rng: np.random.Generator) -> None:
        """The preset is ready: drop the statistics so far, write the initial control."""
        sim.interval(self.flow)
        self.preset.start(sim, self.flow, rng)
        self.started = True

    def next_ns(self, sim: Simulation) -> int:
        """When this flow is next due: a look every ``min_step_ns`` until it starts, then
        every interval."""
        now = sim._s.now_ns
        if not self.started:
            return now + self.min_step_ns
        if self.interval_ns is not None:
            step = self.interval_ns
        else:
            # Rust's f64::round (half away from zero), as the in-engine agent rounds; the
            # flow has an RTT sample (it started).
            step = math.floor(self.fraction * sim.state(self.flow).srtt_us * 1000 + 0.5)
        return now + max(self.min_step_ns, step)

    def observe(self, sim: Simulation) -> tuple[np.ndarray, float]:
        """The observation and reward of the interval just ended (read once)."""
        iv = sim.interval(self.flow)
        st = sim.state(self.flow)
        self.last = (iv, st)
        obs = self.preset.observe(iv, st)
        return obs, float(self.preset.reward(iv, st))

    def act(self, sim: Simulation, action: Any) -> None:
        self.preset.act(sim, self.flow, self.check_action(action))

    def check_action(self, action: Any) -> np.ndarray:
        """``action`` as an array of the action space's shape (a bare number for a
        one-element space), finite; ValueError naming the action otherwise."""
        shape = self.preset.action_space.shape
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"action: not numbers ({exc}); got {action!r}") from None
        if a.ndim == 0 and shape == (1,):
            a = a.reshape(1)
        if a.shape != shape:
            raise ValueError(
                f"action: shape {a.shape}; the {self.preset.name} preset's action space is "
                f"{shape} (an action is not cut to fit)"
            )
        # math.isfinite over the (few) numbers: np.isfinite(a).all() costs ~2.4 us a step,
        # this ~0.5 us (benches/RESULTS.md)
        if not all(map(math.isfinite, a.ravel().tolist())):
            raise ValueError(f"action: must be finite; got {a.tolist()}")
        return a
