"""What the engine supports and what a run may cost, checked before anything runs.

A spec that would stall, overflow or exhaust memory is refused with the estimate and the
limit in the message, rather than found out after minutes or gigabytes.

- **Packet rate.** BBR keeps its bandwidth in a 32-bit word of packets per microsecond
  shifted left by ``BW_SCALE`` = 24 (net/ipv4/tcp_bbr.c, as ours does), so it cannot
  represent more than 2**32 / 2**24 = 256 packets/us: 2.97 Tbit/s of 1448-byte segments.
  tcplab refuses bottleneck rates above that for every algorithm: one limit for the
  engine, not one per algorithm.
- **Memory.** A run holds every packet in flight or queued (measured: 1 s of one BBR flow
  at 1000 Gbit/s, 40 ms, 1 BDP buffer, holds 5.0 M packets at its peak in 1.98 GB of
  resident memory, about 400 bytes a packet) and every series row until it is written
  (2 M rows of a two-flow run at a 1 us interval peaked at 4.7 GB, about 2.4 KB
  a row through the engine's columns, the DataFrame and the CSV writer). An unlimited
  buffer counts nothing here (nothing bounds it before the run): the engine checks the
  packets its links hold between slices of the run and stops it, naming
  ``bottleneck.buffer``, when they pass the same limit (backends/sim/run.py). The limit
  is the machine's, read when it is needed (tcplab.specs.memory: the cgroup's, RLIMIT_AS
  and MemAvailable, the smallest; a share of it, MEMORY_SHARE), not a fixed guess.
- **Series rows** are also capped on their own, since they are written to disk twice.
- **Sweep runs** are counted before the grid is expanded.
- **Events** are counted before the spec is validated (MAX_EVENTS): 300 000 ``[[events]]``
  were accepted after 52 s and 1 GB of validation, one model object each.
- **Flows, arrivals, on/off toggles, packets** (200 000 flows, a Poisson
  workload at 10**6 arrivals/s whose expansion alone took 4.8 GB, load 10 with 1-byte
  flows, on/off periods of 1 ns, a one-year run, each accepted and then running away).
  Every source of events or memory is estimated before anything is expanded or run:
  flows (with a workload's expected arrivals), on/off period changes, and the packets the
  bottleneck and the sources could carry over the run. The engine handles about three
  million packets a second on one core (600 s at 200 Mbit/s in about 3 s), so the packet
  budget is about an hour of work.
- **Policy steps.** A trained policy (``cc = "policy:FILE"``) acts once per monitor
  interval: its file's ``interval_ns`` (at least 1 ms), or ``rtt_fraction`` x srtt, which
  is at least the flow's base RTT, so at most the run over ``rtt_fraction`` x ``rtt``
  (1 ms at least) steps per flow. A policy's interval longer than the run is refused (it
  would never act). A ``preset:FILE.py`` flow's steps run Python (about 16x a trained
  policy's step), counted apart against their own limit (:data:`MAX_PRESET_STEPS`).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from tcplab import policy, preset_file
from tcplab.specs import memory
from tcplab.specs.units import parse_time
from tcplab.specs.workload import mean_size

MAX_PACKETS_PER_SECOND = 256_000_000
"""2**32 >> BW_SCALE packets per microsecond: BBR's bandwidth word (see module doc)."""

MAX_SERIES_ROWS = 2_000_000
"""Per-flow plus queue series rows of one run (about 4.8 GB at BYTES_PER_SERIES_ROW)."""

MAX_SWEEP_RUNS = 100_000
"""Runs of one sweep (grid points x repeat)."""

MAX_FLOWS = 100_000
"""TCP flows of one run, with a workload's expected arrivals (each is a flow with its own
state, series columns and summary row)."""

MAX_ONOFF_CHANGES = 10_000_000
"""Expected on/off period changes of one run over every flow and source."""

MAX_PACKETS = 10_000_000_000
"""Packets one run may carry: the bottleneck's and the sources' rates over the run."""

MAX_POLICY_STEPS = 100_000_000
"""Monitor intervals of the trained policies of one run, over every policy flow. A step of
the example's linear policy (31 weights) costs about 1.7 us of CPU (measured: 1000 s of a
1 Mbit/s run at 1 ms and at 100 ms intervals, 1.88 vs 0.15 s), so 1e8 steps are about
three minutes; a larger network costs more per step (the count does not weigh it)."""

MAX_PRESET_STEPS = 6_000_000
"""Intervals of the ``preset:`` flows of one run (Python, tcplab.gym.preset_run), over
every such flow. A step of Orca's preset with a constant policy costs about 27 us of CPU
(measured: 60 s of a 1 Mbit/s CUBIC run at 1 ms intervals, 1.63-1.67 s against 0.04-0.05 s
undriven, ~59,700 steps), 16x a trained policy's in-engine step, so the limit is
MAX_POLICY_STEPS / 16 rounded: about the same 3 minutes of work."""

MIN_POLICY_STEP_NS = 1_000_000
"""The shortest monitor interval (crates/controllers/src/policy/mod.rs MIN_STEP_NS)."""

BYTES_PER_PACKET_HELD = 400
BYTES_PER_SERIES_ROW = 2_400

MEMORY_LIMIT_ENV = "TCPLAB_MEMORY_LIMIT_GB"
DEFAULT_MEMORY_LIMIT_GB = 8.0
"""Only where the machine says nothing (no /proc, no limit of any kind)."""
MEMORY_SHARE = 0.8
"""The share of the machine's headroom a run's estimate may take. The estimate counts
packets and series rows only: not what the run allocates after the engine stops (the
series as DataFrames and CSV), other processes of the same cgroup, or MemAvailable
falling while the run grows. Measured: 4 CUBIC flows at 1 Gbit/s into an unlimited
buffer under `ulimit -v` 5 GB stop at 9.45 M packets held (peak RSS 2.1 GB), exit 2;
with the fixed 8 GB of 0.8.0 and before, the same run aborted at 3.2 GB (exit 134). At
100 % of a 3 GB limit it still stopped cleanly: the share is a margin, not a correction."""


def memory_limit() -> tuple[int, str]:
    """The memory a run may be estimated to need, in bytes, and whence, for messages.

    MEMORY_SHARE of the smallest headroom of the machine (tcplab.specs.memory: the
    cgroup's limit, RLIMIT_AS, MemAvailable). ``$TCPLAB_MEMORY_LIMIT_GB``, when set,
    replaces MemAvailable (a soft limit: swap, other processes ending) but not a hard one,
    which no run can pass. Without any reading: DEFAULT_MEMORY_LIMIT_GB.
    """
    rooms = memory.headrooms()
    text = os.environ.get(MEMORY_LIMIT_ENV)
    try:
        gb = float(text) if text else math.nan
    except ValueError:
        gb = math.nan
    if math.isfinite(gb) and gb > 0:
        rooms = [h for h in rooms if h.hard]
        cap = [(int(gb * 1e9), f"{MEMORY_LIMIT_ENV}={text}")]
    else:
        cap = []
    limits = cap + [
        (
            int(h.bytes * MEMORY_SHARE),
            f"{MEMORY_SHARE:.0%} of {h.source}"
            + ("; a hard limit" if h.hard else f"; {MEMORY_LIMIT_ENV} replaces this reading"),
        )
        for h in rooms
    ]
    if not limits:
        return (
            int(DEFAULT_MEMORY_LIMIT_GB * 1e9),
            f"a default: this machine's memory could not be read; set {MEMORY_LIMIT_ENV}",
        )
    return min(limits)


MAX_EVENTS = 10_000
"""``[[events]]`` of one spec: a change of the bottleneck every 6 ms over a minute, far
more than a scenario's steps. A capacity that varies faster is a trace
(``rate = { trace = FILE }``, up to 50 M delivery opportunities: tcplab.specs.traces),
which the engine reads as numbers, not one validated table per change: 10 000 events
validate in about 0.25 s, 300 000 took 52 s and 1 GB."""


def _too_many_events(n: int) -> list[tuple[str, str]]:
    if n <= MAX_EVENTS:
        return []
    return [
        (
            "events",
            f"{n:,} events; the limit is {MAX_EVENTS:,} (a change every 6 ms over a minute): "
            "for a capacity that varies faster use a trace, bottleneck.rate = { trace = FILE }",
        )
    ]


def check_raw_counts(raw: Any) -> list[tuple[str, str]]:
    """Arrays of a raw spec (as read from TOML) within their limits, counted before any
    is validated: what validation would cost grows with them."""
    events = raw.get("events") if isinstance(raw, dict) else None
    return _too_many_events(len(events)) if isinstance(events, list) else []


_EVENT_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*events[ \t]*\]\]", re.MULTILINE)


def check_event_headers(text: str) -> list[tuple[str, str]]:
    """The ``[[events]]`` headers of a spec's text within MAX_EVENTS, counted before the
    TOML is parsed: tomllib takes about 40 us a table (300 000 events: 13 s), and a
    spec file may be 64 MB. Inline arrays are counted after parsing (check_raw_counts)."""
    return _too_many_events(len(_EVENT_HEADER.findall(text)))


def series_rows(spec: Any) -> int:
    """Rows of series.csv plus queue.csv: one per flow and one per queue each interval."""
    samples = -(-spec.experiment.duration // spec.experiment.sample_interval) + 1
    return samples * (spec.flow_count() + 1)


def packets_held(spec: Any) -> int:
    """Packets the bottleneck path can hold at once: the largest flow (or source) RTT's worth of the
    fastest bottleneck rate in flight, plus a full bottleneck buffer (a resolved spec:
    buffers in packets or bytes; an unlimited buffer adds nothing we could bound)."""
    wire = spec.tcp.mss + spec.tcp.header
    top_rate = max([spec.bottleneck.rate] + [e.rate for e in spec.events if e.rate is not None])
    b = spec.bottleneck
    max_rtt = max(
        [f.rtt for f in spec.flows]
        + [s.rtt if s.rtt is not None else 2 * b.delay for s in spec.sources]
        + [p.rtt if p.rtt is not None else 2 * b.delay for p in spec.probes]
    )
    pipe = top_rate * max_rtt // (8 * wire * 10**9)
    buf = spec.bottleneck.buffer
    queued = (
        int(buf.value)
        if buf.unit == "pkt"
        else int(buf.value) // wire
        if buf.unit == "bytes"
        else 0
    )
    return pipe + queued


def check_rates(spec: Any) -> list[tuple[str, str]]:
    """Bottleneck and event rates within the engine's packet rate (an unresolved spec will do)."""
    wire = spec.tcp.mss + spec.tcp.header
    limit_bps = MAX_PACKETS_PER_SECOND * wire * 8
    out = []
    # Every link and source, not only the bottleneck (a [[links]] or [[sources]]
    # rate of 1 Pbit/s was accepted, and a [[links]] rate above 10 Tbit/s gave access
    # links 100 times faster, beyond the largest rate a spec can state).
    rates = (
        [("bottleneck.rate", spec.bottleneck.rate)]
        + [(f"events[{i}].rate", e.rate) for i, e in enumerate(spec.events) if e.rate is not None]
        + [(f"links[{i}].rate", ln.rate) for i, ln in enumerate(spec.links)]
        + [(f"sources[{i}].rate", src.rate) for i, src in enumerate(spec.sources)]
    )
    for field, rate in rates:
        if isinstance(rate, (int, float)) and rate > limit_bps:
            out.append(
                (
                    field,
                    f"{rate / 1e12:.4g} Tbit/s is above the engine's limit of "
                    f"{MAX_PACKETS_PER_SECOND // 10**6} packets/us x {wire} B = {limit_bps / 1e12:.4g} Tbit/s "
                    "(BBR's bandwidth word, tcp_bbr.c BW_SCALE)",
                )
            )
    return out


def check_resources(spec: Any) -> list[tuple[str, str]]:
    """Series rows and estimated peak memory of a resolved spec within their limits."""
    out = []
    rows = series_rows(spec)
    if rows > MAX_SERIES_ROWS:
        out.append(
            (
                "experiment.sample_interval",
                f"the run would record {rows:,} series rows (duration / sample_interval x (flows + 1)); "
                f"the limit is {MAX_SERIES_ROWS:,}: use a longer sample_interval",
            )
        )
    held = packets_held(spec)
    need = held * BYTES_PER_PACKET_HELD + min(rows, MAX_SERIES_ROWS) * BYTES_PER_SERIES_ROW
    limit, whence = memory_limit()
    if need > limit:
        out.append(
            (
                "bottleneck",
                f"the run would need about {need / 1e9:.1f} GB ({held:,} packets in flight "
                f"and queued at {BYTES_PER_PACKET_HELD} B each, plus series); the limit is "
                f"{limit / 1e9:.1f} GB ({whence})",
            )
        )
    return out


def _window_s(start: int, stop: int | None, duration: int) -> float:
    end = duration if stop is None else min(stop, duration)
    return max(0, end - start) / 1e9


def expected_arrivals(spec: Any) -> list[float]:
    """Each workload's expected number of flows (rate x arrival window), before any is
    drawn: refusing a workload must not cost what running it would."""
    out = []
    for w in spec.workloads:
        rate = w.rate
        if rate is None:
            mean = mean_size(w.size)
            rate = w.load * float(spec.bottleneck.rate) / (8 * max(mean, 1.0))
        out.append(rate * _window_s(w.start, w.stop, spec.experiment.duration))
    return out


def _interval_steps(spec: Any, interval_of: Any) -> tuple[float, list[tuple[str, str]]]:
    """Steps of the flows ``interval_of(flow)`` describes as ``(step_ns, fixed, long)``
    (None for a flow of another kind, or a file its own check refuses): count x the
    flow's window / max(step, 1 ms), and the problem ``long`` (naming ``flows[i].cc``) for
    a fixed interval longer than the run."""
    steps, out = 0.0, []
    dur = spec.experiment.duration
    for i, f in enumerate(spec.flows):
        got = interval_of(f, dur)
        if got is None:
            continue
        step, fixed, long = got
        if fixed and step > dur:
            out.append((f"flows[{i}].cc", long))
            continue
        step = max(step, MIN_POLICY_STEP_NS)
        steps += f.count * _window_s(f.start, f.stop, dur) * 1e9 / step
    return steps, out


def policy_steps(spec: Any) -> tuple[float, list[tuple[str, str]]]:
    """The policy steps of a spec's ``policy:`` flows (an upper bound; see the module
    docs), and problems: a policy whose fixed interval is longer than the run. A policy
    file that cannot be read is left to the policy's own check."""

    def interval_of(f: Any, dur: int) -> tuple[float, bool, str] | None:
        if not policy.is_policy(f.cc):
            return None
        try:
            p = policy.load(f.cc)
        except ValueError:
            return None
        interval = p.get("interval_ns")
        if isinstance(interval, int) and not isinstance(interval, bool):
            long = (
                f"{policy.path(f.cc)}: interval_ns {interval} is longer than the run "
                f"({dur} ns): the policy would never act"
            )
            return interval, True, long
        frac = p.get("rtt_fraction", 0.5)
        frac = frac if isinstance(frac, (int, float)) and frac > 0 else 0.5
        return frac * (f.rtt or 0), False, ""

    return _interval_steps(spec, interval_of)


def preset_steps(spec: Any) -> tuple[float, list[tuple[str, str]]]:
    """The steps of a spec's ``preset:`` flows (an upper bound, as :func:`policy_steps`'s),
    and problems: a fixed INTERVAL longer than the run. A file that cannot be loaded or an
    INTERVAL that is not one is left to the preset's own check and its driver."""

    def interval_of(f: Any, dur: int) -> tuple[float, bool, str] | None:
        if not preset_file.is_preset(f.cc):
            return None
        try:
            p = preset_file.load(f.cc)
            if p.interval == "rtt":
                frac = float(p.rtt_fraction)
                ok = math.isfinite(frac) and frac > 0
                return (frac * (f.rtt or 0) if ok else 0.0), False, ""
            step = (
                parse_time(p.interval) if isinstance(p.interval, str) else float(p.interval) * 1e9
            )
        except (TypeError, ValueError):
            return None
        if not math.isfinite(step):
            return None
        long = (
            f"{p.path}: INTERVAL {p.interval!r} is longer than the run ({dur / 1e9:g} s): "
            "the preset would never act"
        )
        return step, True, long

    return _interval_steps(spec, interval_of)


def check_counts(spec: Any) -> list[tuple[str, str]]:
    """Flows (and expected workload arrivals), on/off changes and packets of a spec within
    their limits; call before workloads are expanded. A CDF that cannot be read is left to
    the workload's own check."""
    out: list[tuple[str, str]] = []
    dur = spec.experiment.duration
    try:
        arrivals = expected_arrivals(spec)
    except (OSError, ValueError):
        arrivals = [0.0] * len(spec.workloads)
    flows = spec.flow_count() + sum(arrivals)
    if flows > MAX_FLOWS:
        where = "workloads" if arrivals and sum(arrivals) > spec.flow_count() else "flows"
        out.append(
            (
                where,
                f"the run would have about {flows:,.0f} flows ([[flows]] counts plus the "
                f"workloads' expected arrivals, rate x arrival window); the limit is "
                f"{MAX_FLOWS:,}: lower count, rate or load, or shorten the run",
            )
        )
    changes = 0.0
    for group in list(spec.flows) + list(spec.sources):
        if group.onoff is not None:
            period_s = (group.onoff.on + group.onoff.off) / 1e9
            span = _window_s(group.start, group.stop, dur)
            changes += 2 * group.count * span / period_s if period_s > 0 else math.inf
    if changes > MAX_ONOFF_CHANGES:
        out.append(
            (
                "onoff",
                f"the run would switch on and off about {changes:,.0f} times (2 x count x "
                f"duration / (on + off) over every flow and source); the limit is "
                f"{MAX_ONOFF_CHANGES:,}: use longer on and off periods",
            )
        )
    for count, limit, what in (
        (
            policy_steps,
            MAX_POLICY_STEPS,
            "the run's trained policies would act about {:,.0f} times (count x duration / "
            "their monitor interval, rtt_fraction x rtt or interval_ns, at least 1 ms)",
        ),
        (
            preset_steps,
            MAX_PRESET_STEPS,
            "the run's preset: flows would step their Python about {:,.0f} times (count x "
            "duration / INTERVAL, or RTT_FRACTION x rtt, at least 1 ms)",
        ),
    ):
        steps, problems = count(spec)
        out.extend(problems)
        if steps > limit:
            out.append(
                (
                    "flows",
                    f"{what.format(steps)}; the limit is {limit:,}: shorten the run or "
                    "lengthen the interval",
                )
            )
    wire_bits = 8 * (spec.tcp.mss + spec.tcp.header)
    top = max(
        [float(spec.bottleneck.rate)] + [float(e.rate) for e in spec.events if e.rate is not None]
    )
    offered = sum(float(src.rate) * src.count for src in spec.sources)
    packets = (top + offered) * dur / 1e9 / wire_bits
    if packets > MAX_PACKETS:
        out.append(
            (
                "experiment.duration",
                f"the run could carry about {packets:,.0f} packets (the bottleneck's top rate "
                f"and the sources' rates over the duration); the limit is {MAX_PACKETS:,} "
                "(about an hour of engine time): shorten the run or lower the rates",
            )
        )
    return out
