"""A running simulation held by Python: the stepping engine (``tcplab._engine.Stepper``,
crates/sim/src/world/stepping.rs) built from a spec through the same path as
``tcplab.run`` (validate, resolve, ``world_config``), advanced by intervals, read and
written between them, and finished into an ordinary run directory.

Python runs once per call, never per packet: ``advance`` runs the event loop in Rust
with the GIL released, and a flow's state or interval statistics come back as one tuple.

Writes (``set_cwnd``, ``set_pacing_rate``, ``set_ssthresh``) act as a congestion
controller's writes to the socket; what the stack does with them and on loss/RTO is in
crates/cc/src/external.rs (``cc = "external"``) and crates/sim/src/world/stepping.rs.
Every write is kept (time, flow, what) and ``finish`` stores them as ``actions.csv`` in
the run directory, listed in its manifest: the run's ``spec.toml`` alone does not
reproduce a run an agent drove (its external flows would hold their initial window).

Arguments are checked before they reach the engine: a flow index, a time, a window or a
rate that is negative, not finite or beyond what the engine holds (2**64 - 1 ns, 2**32 - 1
segments) raises ValueError naming the argument, and so does ``advance`` to a time before
now (a simulation only goes forward).
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from tcplab.analysis.rundata import from_engine
from tcplab.analysis.summary import flow_metrics, summarize
from tcplab.engine import engine
from tcplab.errors import SpecError
from tcplab.lowering import config_json, resolve, world_config
from tcplab.runs.result import Result
from tcplab.specs.load import SpecLike, as_spec
from tcplab.storage.directory import write_run
from tcplab.storage.ownership import check_replaceable

MAX_NS = 2**64 - 1  # the engine's SimTime (u64 ns)
# A named tuple from the engine's fixed-length array without the keyword-argument
# constructor (~0.5 us a step less); Simulation checks at construction that the engine's
# fields are the tuple's.
_tuple_new = tuple.__new__
MAX_SEGMENTS = 2**32 - 1  # cwnd and ssthresh are u32, as the kernel's


def _index(name: str, value: Any, n: int) -> int:
    """A flow index: an int in [0, n)."""
    if type(value) is int and 0 <= value < n:  # the common case first: ~5 reads per step
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise ValueError(f"{name}: must be a flow index, an int in [0, {n}); got {value!r}")
    return int(value)


def _count(name: str, value: Any, low: int, high: int) -> int:
    """A whole number of segments (or ns) in [low, high], given as an int or a float
    holding one."""
    if type(value) is int and low <= value <= high:  # the common case first: a write a step
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number; got {value!r}") from None
    if not (math.isfinite(x) and low <= x <= high):
        raise ValueError(f"{name}: must be a finite number in [{low}, {high}]; got {value!r}")
    return int(value)


class FlowState(NamedTuple):
    """A flow's state now (``Stepper.STATE_FIELDS``): the socket and cumulative counters."""

    started: float
    cwnd_pkts: float
    ssthresh_pkts: float
    inflight_pkts: float
    pacing_rate_bps: float
    srtt_us: float
    min_rtt_us: float
    latest_rtt_us: float
    delivery_rate_bps: float
    ca_state: float
    sent_bytes: float
    acked_bytes: float
    delivered_bytes: float
    lost_pkts: float
    retransmitted_pkts: float
    rto_count: float
    now_us: float


class Interval(NamedTuple):
    """One flow's statistics since the previous read (``Stepper.INTERVAL_FIELDS``);
    ``acked_bytes`` counts segments cumulatively acked or SACKed (x MSS),
    ``delivered_bytes`` what the receiver delivered in order; RTT fields are 0 when the
    interval had no sample."""

    duration_us: float
    sent_bytes: float
    acked_bytes: float
    delivered_bytes: float
    lost_pkts: float
    retransmitted_pkts: float
    rto_count: float
    rtt_samples: float
    rtt_mean_us: float
    rtt_min_us: float


class ActionLog(Sequence[tuple[int, int, str, float]]):
    """Every write a driver made, (time ns, flow, field, value), in typed arrays: 21 bytes
    a write where a list of tuples took ~140 (a 10 ms Aurora episode's memory grew 0.28 KB
    a step with two writes per step; benches/RESULTS.md). Read as a sequence of tuples."""

    FIELDS = ("cwnd_pkts", "pacing_rate_bps", "ssthresh_pkts")
    _CODE = {name: code for code, name in enumerate(FIELDS)}

    def __init__(self) -> None:
        self._t, self._flow = array("q"), array("i")
        self._field, self._value = array("b"), array("d")

    def add(self, t_ns: int, flow: int, field: str, value: float) -> None:
        self._t.append(t_ns)
        self._flow.append(flow)
        self._field.append(self._CODE[field])
        self._value.append(value)

    def __len__(self) -> int:
        return len(self._t)

    def _row(self, i: int) -> tuple[int, int, str, float]:
        return (self._t[i], self._flow[i], self.FIELDS[self._field[i]], self._value[i])

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._row(k) for k in range(*i.indices(len(self)))]
        return self._row(range(len(self))[i])


class Simulation:
    """One spec, running. ``Simulation(spec, seed=None, overrides=None)``."""

    def __init__(
        self,
        spec: SpecLike,
        *,
        seed: int | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        s = as_spec(spec, overrides)
        if seed is not None:
            s = s.model_copy(deep=True)
            s.experiment.seed = seed
        if (s.experiment.backend or "sim") != "sim":
            raise SpecError(
                [("experiment.backend", "the stepping engine is the simulator's: use 'sim'")]
            )
        self.spec = resolve(s)
        self.config = world_config(self.spec)
        eng = engine()
        assert tuple(eng.Stepper.STATE_FIELDS) == FlowState._fields
        assert tuple(eng.Stepper.INTERVAL_FIELDS) == Interval._fields
        try:
            self._s = eng.Stepper(config_json(self.config))
        except ValueError as exc:
            raise SpecError([("engine config", str(exc))]) from None
        self._t0 = time.perf_counter()
        self.actions = ActionLog()
        # Flow index -> its FlowState, read since the world last changed (an advance or a
        # write): a driver reads a flow's state to observe and again to act (Aurora's
        # srtt), and the second read costs a dict lookup, not a crossing into the engine.
        self._states: dict[int, FlowState] = {}
        self.privileged: dict[str, Any] = {}
        """Privileged training options the run's driver used (tcplab.gym's presets set
        them): recorded under ``privileged`` in the finished run's summary.json."""
        self.flow_names: dict[int, str] = {}
        """Engine flow index -> the name its results carry, where a driver names it (a
        ``preset:`` flow: ``preset:<name>``; otherwise the engine's)."""

    # -- time ------------------------------------------------------------------------
    @property
    def now_s(self) -> float:
        return self._s.now_ns / 1e9

    @property
    def end_s(self) -> float:
        return self._s.end_ns / 1e9

    @property
    def done(self) -> bool:
        return self._s.done

    @property
    def n_flows(self) -> int:
        return self._s.n_flows

    def _flow(self, flow: Any) -> int:
        return _index("flow", flow, self._s.n_flows)

    def cc(self, flow: int) -> str:
        """Flow ``flow``'s algorithm (the engine's flow index, after ``count`` expansion)."""
        return self._s.cc(self._flow(flow))

    def advance(self, *, to_s: float | None = None, by_s: float | None = None) -> bool:
        """Run to ``to_s`` or by ``by_s`` simulated seconds (capped at the end; not back:
        ``to_s`` before now or ``by_s`` < 0 is refused); returns whether the run reached
        its end."""
        if (to_s is None) == (by_s is None):
            raise SpecError([("advance", "give exactly one of to_s= and by_s=")])
        name, value = ("to_s", to_s) if to_s is not None else ("by_s", by_s)
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"{name}: must be a number of seconds; got {value!r}") from None
        if not math.isfinite(x) or x < 0:
            raise ValueError(f"{name}: must be a finite number of seconds >= 0; got {value!r}")
        now = self._s.now_ns
        t = round(x * 1e9) if to_s is not None else now + round(x * 1e9)
        if t < now:
            raise ValueError(
                f"to_s: {value!r} is before now ({now / 1e9:g} s): a simulation only goes forward"
            )
        self._states.clear()
        return self._s.advance(min(t, self._s.end_ns))

    def advance_ns(self, to_ns: int) -> bool:
        """:meth:`advance` in integer nanoseconds (no rounding; the fast path)."""
        # A driver's own clock (a plain int in range) passes the first test alone.
        if not (type(to_ns) is int and 0 <= to_ns <= MAX_NS):
            if isinstance(to_ns, bool) or not isinstance(to_ns, (int, np.integer)):
                raise ValueError(f"to_ns: must be an int number of ns; got {to_ns!r}")
            if not 0 <= to_ns <= MAX_NS:
                raise ValueError(f"to_ns: must be in [0, 2**64 - 1] ns; got {to_ns!r}")
        self._states.clear()
        return self._s.advance(int(to_ns))

    # -- reads -----------------------------------------------------------------------
    def state(self, flow: int) -> FlowState:
        st = self._states.get(flow) if type(flow) is int else None
        if st is None:
            i = self._flow(flow)
            st = self._states[i] = _tuple_new(FlowState, self._s.state(i))
        return st

    def interval(self, flow: int) -> Interval:
        """Statistics since the previous call for ``flow`` (since the start at the first)."""
        return _tuple_new(Interval, self._s.interval(self._flow(flow)))

    # -- writes ----------------------------------------------------------------------
    def set_cwnd(self, flow: int, cwnd_pkts: int) -> None:
        n = _count("cwnd_pkts", cwnd_pkts, 1, MAX_SEGMENTS)
        self._states.clear()
        self._s.set_cwnd(self._flow(flow), n)
        self.actions.add(self._s.now_ns, flow, "cwnd_pkts", float(n))

    def set_pacing_rate(self, flow: int, bps: float) -> None:
        try:
            rate = float(bps)
        except (TypeError, ValueError):
            raise ValueError(f"bps: must be a number of bit/s; got {bps!r}") from None
        self._states.clear()
        self._s.set_pacing_rate(self._flow(flow), rate)
        self.actions.add(self._s.now_ns, flow, "pacing_rate_bps", rate)

    def set_ssthresh(self, flow: int, pkts: int) -> None:
        n = _count("pkts", pkts, 2, MAX_SEGMENTS)
        self._states.clear()
        self._s.set_ssthresh(self._flow(flow), n)
        self.actions.add(self._s.now_ns, flow, "ssthresh_pkts", float(n))

    # -- the end ---------------------------------------------------------------------
    def finish(
        self, out: str | Path | None = None, *, report: bool = False, pdf: bool = False
    ) -> Result:
        """Run to the end and return the :class:`Result` ``tcplab.run`` would; with
        ``out``, also write the run directory (the same files and digest rules as
        ``tcplab run -o``, plus ``actions.csv``, the writes made)."""
        if out is not None:
            check_replaceable(Path(out), "out")
        self._states.clear()
        raw = self._s.finish()
        for i, name in self.flow_names.items():  # a driver's name for its flows
            raw["flows"][i]["cc"] = name
        data = from_engine(self.spec, raw)
        data.actions = self.actions
        summary = summarize(data)
        if self.privileged:  # a run driven with knowledge no sender has, said so
            summary["privileged"] = dict(self.privileged)
        result = Result(
            self.spec,
            data.series,
            data.queue,
            flow_metrics(data),
            summary["aggregate"],
            summary,
            run=data,
        )
        if out is not None:

            def extra(tmp: Path) -> None:
                if report:
                    # why: start-up time; the report pulls in matplotlib, and most episodes draw none
                    from tcplab.report.run_report import save_report

                    save_report(result, tmp, pdf=pdf)

            write_run(
                result,
                out,
                self.config,
                time.perf_counter() - self._t0,
                replace=True,
                flag="out",
                extra=extra,
            )
        return result


def run_with(
    spec: SpecLike, controller: Callable[[Simulation], None], interval_s: float
) -> Simulation:
    """Step ``spec`` every ``interval_s`` (at least 1 us) calling ``controller(sim)`` after
    each advance; returns the simulation at its end (call ``finish`` for the result)."""
    try:
        ok = math.isfinite(float(interval_s)) and float(interval_s) >= 1e-6
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"interval_s: must be a finite number of seconds >= 1e-6; got {interval_s!r}"
        )
    sim = Simulation(spec)
    while not sim.advance(by_s=interval_s):
        controller(sim)
    return sim
