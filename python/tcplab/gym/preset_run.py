"""A spec whose flows name ``preset:FILE.py`` (:mod:`tcplab.preset_file`), run whole:
the stepping engine runs the spec, and each such flow's preset and policy act between
its steps through :class:`~tcplab.gym.flow_driver.FlowDriver`, the code
:class:`~tcplab.gym.CongestionControlEnv` trains with. So a policy and preset that an
environment episode drove give the same run here, write for write (the same start rule,
interval and checks; tests/gym/test_preset_run.py).

Several preset flows (or one file's ``count`` copies) each get their own preset (a fresh
instance of a ``PRESET`` class, a deep copy of an instance) and clock; the engine
advances to whichever is due first. Each flow's random generator (the presets' training
options draw from it) is seeded from the spec's seed and the flow's index.

Errors, each a SpecError naming ``flows[i].cc`` and the file: a preset that is not a
:class:`~tcplab.gym.presets.Preset`, an interval below the engine's 1 ms floor, a flow
whose algorithm is not the preset's ``controlled_cc``, and a policy that raises or
returns an action of the wrong shape or not finite (the run stops there and nothing is
written).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from tcplab import preset_file
from tcplab.engine import engine
from tcplab.errors import SpecError
from tcplab.gym.flow_driver import FlowDriver, interval_ns, rtt_fraction
from tcplab.gym.presets import Preset
from tcplab.gym.simulation import Simulation
from tcplab.runs.result import Result
from tcplab.specs.model import Spec

PROGRESS_CALLS = 100  # about as often as the engine's own progress callback


def _drivers(spec: Spec, min_step_ns: int) -> list[tuple[FlowDriver, Any, str]]:
    """(driver, policy, the spec field) per engine flow of a ``preset:`` flow group."""
    out = []
    engine_flow = 0
    for i, f in enumerate(spec.flows):
        at = f"flows[{i}].cc"
        if not preset_file.is_preset(f.cc):
            engine_flow += f.count
            continue
        try:
            loaded = preset_file.load(f.cc)
        except ValueError as exc:
            raise SpecError([(at, str(exc))]) from None
        src = loaded.preset
        if not (isinstance(src, Preset) or (isinstance(src, type) and issubclass(src, Preset))):
            raise SpecError(
                [
                    (
                        at,
                        f"{loaded.path}: PRESET must be a tcplab.gym.presets.Preset subclass or instance",
                    )
                ]
            )
        try:
            step = interval_ns(loaded.interval, min_step_ns, "INTERVAL")
            fraction = rtt_fraction(loaded.rtt_fraction, "RTT_FRACTION")
        except SpecError as err:
            sub, msg = err.problems[0]
            raise SpecError([(at, f"{loaded.path}: {sub} {msg}")]) from None
        for _ in range(f.count):
            try:
                preset = src() if isinstance(src, type) else copy.deepcopy(src)
            except Exception as exc:  # noqa: BLE001 - the user's constructor, named
                raise SpecError(
                    [(at, f"{loaded.path}: PRESET() raised {type(exc).__name__}: {exc}")]
                ) from None
            d = FlowDriver(preset, engine_flow, step, fraction, min_step_ns)
            out.append((d, loaded.policy, at))
            engine_flow += 1
    return out


def execute_presets(
    spec: Spec, progress: Callable[[float], None] | None = None
) -> tuple[Result, dict[str, Any], float]:
    """Run ``spec`` (validated, simulator backend) with its ``preset:`` flows driven;
    return what :func:`tcplab.runs.execute.execute` returns: the result (its run data
    carrying the writes, stored as actions.csv), the engine config and the wall time."""
    t0 = time.perf_counter()
    sim = Simulation(spec)
    drivers = _drivers(sim.spec, int(engine().POLICY_MIN_STEP_NS))
    seed = sim.spec.experiment.seed
    for d, _, at in drivers:
        cc = sim.cc(d.flow)
        want = d.preset.controlled_cc
        if cc != want:  # the lowering ran the preset's controlled_cc: a mismatch is ours
            raise SpecError([(at, f"the preset controls a {want!r} flow; the engine runs {cc!r}")])
        sim.flow_names[d.flow] = f"preset:{d.preset.name}"
    rngs = [np.random.default_rng([seed, d.flow]) for d, _, _ in drivers]
    for (d, _, _), rng in zip(drivers, rngs):
        d.begin(sim, rng)
    due = [d.next_ns(sim) for d, _, _ in drivers]
    end = sim._s.end_ns
    report_every = max(1, end // PROGRESS_CALLS)
    next_report = report_every
    done = sim.done
    while not done and drivers:
        t = min(min(due), end)
        done = sim.advance_ns(t)
        now = sim._s.now_ns
        if done:
            break
        for k, ((d, policy, at), rng) in enumerate(zip(drivers, rngs)):
            if due[k] > now:
                continue
            if not d.started:
                if d.ready(sim):
                    d.start(sim, rng)
            else:
                obs, _reward = d.observe(sim)
                _act(d, sim, policy, obs, at)
            due[k] = d.next_ns(sim)
        if progress is not None and now >= next_report:
            progress(now / 1e9)
            next_report = now + report_every
    privileged = {}
    for d, _, _ in drivers:
        for name, value in d.preset.privileged().items():
            privileged.setdefault(name, []).append({"flow": d.flow, "value": value})
    sim.privileged = privileged
    result = sim.finish()
    return result, sim.config, time.perf_counter() - t0


def _act(d: FlowDriver, sim: Simulation, policy: Any, obs: np.ndarray, at: str) -> None:
    """The policy's action for ``obs``, checked and written; a SpecError naming the flow
    (and the simulated time) if the policy raises or its action is refused."""
    when = f"at {sim.now_s:.3f} s"
    try:
        action = policy(obs)
    except Exception as exc:  # noqa: BLE001 - the user's policy, named
        raise SpecError(
            [(at, f"policy(observation) raised {type(exc).__name__} {when}: {exc}")]
        ) from None
    try:
        d.act(sim, action)
    except ValueError as exc:
        raise SpecError([(at, f"policy(observation) {when}: {exc}")]) from None
