"""The metrics of the BBR literature, each defined once (see docs/METRICS.md).

Every function is pure: it takes numbers, arrays or DataFrames and returns numbers or
Series, so it can be tested on a hand-made series and reused in a notebook. Where a paper
is informal, the docstring says which definition tcplab uses; thresholds and windows are
arguments with the paper's values as defaults.

Conventions: a series sample at ``time_s = t`` describes the interval ``(t - dt, t]``
(``dt`` = the run's ``sample_interval``); rates are bit/s; times are seconds.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tcplab.specs.traces import OPPORTUNITY_BYTES

# ---------------------------------------------------------------------------- fairness


def jain_index(x: Iterable[float]) -> float:
    """Jain's fairness index ``(sum x_i)^2 / (n * sum x_i^2)``.

    1 when all ``n`` values are equal, ``1/n`` when one value takes everything.
    Source: Jain, Chiu, Hawe 1984; RFC 5166; TUM (Jaeger et al. 2019) Sec. 3.4.

    Returns NaN for no values or when every value is 0 (nothing to share).
    """
    a = np.asarray(list(x), dtype=float)
    if a.size == 0:
        return math.nan
    sq = float(np.sum(a * a))
    if sq == 0.0:
        return math.nan
    return float(np.sum(a)) ** 2 / (a.size * sq)


def active_mask(times_s: np.ndarray, start_s: float, stop_s: float) -> np.ndarray:
    """Whether a flow that runs over ``[start_s, stop_s]`` is active in the interval
    ending at each of ``times_s``: ``start_s < t <= stop_s``."""
    t = np.asarray(times_s, dtype=float)
    return (t > start_s) & (t <= stop_s + 1e-12)


def jain_over_time(throughput: pd.DataFrame, flows: pd.DataFrame) -> pd.Series:
    """The time-resolved fairness F: Jain's index of the active flows' per-interval
    throughputs, one value per sample time. Source: TUM Sec. 3.4 (tcplab uses throughput,
    as METRICS.md defines F; TUM computes it on the sending rate).

    Parameters
    ----------
    throughput : DataFrame
        Index: sample time (s); one column per flow id; values bit/s.
    flows : DataFrame
        Index: flow id; columns ``start_s`` and ``stop_s``.

    Returns
    -------
    Series
        F per sample time; NaN where fewer than two flows are active or all send nothing.
    """
    times = throughput.index.to_numpy(dtype=float)
    # Vectorised over samples (a 600 s run has 6000 of them; the report draws this):
    # inactive flows are left out, an active flow's missing value counts as 0.
    cols = throughput.columns
    active = active_mask(  # one column per flow
        times[:, None],
        flows.loc[cols, "start_s"].to_numpy(dtype=float),
        flows.loc[cols, "stop_s"].to_numpy(dtype=float),
    )
    values = np.where(active, np.nan_to_num(throughput.to_numpy(dtype=float)), 0.0)
    n = active.sum(axis=1)
    total = values.sum(axis=1)
    sq = (values * values).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((n >= 2) & (sq > 0), total * total / (n * sq), math.nan)
    return pd.Series(out, index=throughput.index, name="jain_index")


def t_f95(
    times_s: Sequence[float],
    fairness: Sequence[float],
    t_join_s: float,
    threshold: float = 0.95,
    max_dip_s: float = 2.0,
    interval_s: float | None = None,
) -> float:
    """T_F95: seconds after ``t_join_s`` from which F stays >= ``threshold``, dips below it
    lasting at most ``max_dip_s`` allowed. Source: TUM Sec. 6.2.

    A dip is a run of consecutive samples below the threshold; its length is the number of
    samples times the sample interval. The result is the time (relative to ``t_join_s``)
    of the first sample >= threshold after the last dip longer than ``max_dip_s`` (or of
    the first sample >= threshold if there is no such dip), minus the interval's length, so
    that a flow fair from its first interval on scores 0. NaN if F never gets there (the
    window ends inside a long dip). NaN samples (fewer than two flows) count as below.
    """
    t = np.asarray(times_s, dtype=float)
    f = np.asarray(fairness, dtype=float)
    keep = t > t_join_s
    t, f = t[keep], f[keep]
    if t.size == 0:
        return math.nan
    dt = (
        interval_s
        if interval_s is not None
        else (float(np.median(np.diff(t))) if t.size > 1 else 0.0)
    )
    ok = np.nan_to_num(f, nan=-1.0) >= threshold
    start_idx: int | None = None  # first index of the current stable stretch
    k = 0
    while k < t.size:
        if ok[k]:
            if start_idx is None:
                start_idx = k
            k += 1
            continue
        j = k
        while j < t.size and not ok[j]:
            j += 1
        if (j - k) * dt > max_dip_s + 1e-9:
            start_idx = None
        k = j
    if start_idx is None:
        return math.nan
    return max(0.0, float(t[start_idx] - dt - t_join_s))


def f_avg(
    times_s: Sequence[float], fairness: Sequence[float], t_join_s: float, window_s: float = 30.0
) -> float:
    """F_avg: the mean of F over ``(t_join_s, t_join_s + window_s]``, NaN samples skipped.
    Source: TUM Sec. 6.2."""
    t = np.asarray(times_s, dtype=float)
    f = np.asarray(fairness, dtype=float)
    sel = (t > t_join_s) & (t <= t_join_s + window_s + 1e-12) & ~np.isnan(f)
    return float(np.mean(f[sel])) if sel.any() else math.nan


def rebin(throughput: pd.DataFrame, bin_s: float) -> pd.DataFrame:
    """Average per-interval rates over bins of ``bin_s`` seconds: the sample at ``t``
    goes into the bin ending at ``ceil(t / bin_s) * bin_s``."""
    keys = np.ceil(np.round(throughput.index.to_numpy(dtype=float) / bin_s, 9)) * bin_s
    return throughput.groupby(keys).mean()


def equilibrium_time(
    throughput: pd.DataFrame,
    flows: pd.DataFrame,
    t_join_s: float,
    bin_s: float = 1.0,
    threshold: float = 0.95,
    max_dip_s: float = 2.0,
) -> float:
    """Equilibrium time after a flow joins: seconds until the flows reach "almost equal
    shares" (BBR-ACD, Mahmud et al. 2020, Sec. 3.2). The paper reads it off plots; tcplab
    defines it as T_F95 (TUM Sec. 6.2) computed on throughput averaged over ``bin_s`` = 1 s
    intervals, so that BBR's 8-RTT gain cycle does not count as unfairness."""
    binned = rebin(throughput, bin_s)
    fair = jain_over_time(binned, flows)
    return t_f95(
        fair.index.to_numpy(), fair.to_numpy(), t_join_s, threshold, max_dip_s, interval_s=bin_s
    )


def share(values: Sequence[float]) -> list[float]:
    """Each value's share of the total (NaN for all if the total is 0). The basis of
    ``share`` in summary.json: a flow's mean throughput (over its active time) over the sum
    of all flows' mean throughputs, so that a flow joining late is not penalised for the
    time it did not run (the same basis as F_tp)."""
    a = np.asarray(values, dtype=float)
    tot = float(a.sum())
    return [float(v / tot) if tot > 0 else math.nan for v in a]


def share_vs_fair_share(
    group_bytes: dict[str, float], group_flows: dict[str, int]
) -> dict[str, float]:
    """Each group's share of the total throughput minus its flow-count share (0 = fair;
    +0.3 = the group takes 30 points more than its flows' share). Source: TUM Sec. 5.1,
    Figure 12."""
    tot_b = sum(group_bytes.values())
    tot_n = sum(group_flows.values())
    if tot_b <= 0 or tot_n <= 0:
        return {g: math.nan for g in group_bytes}
    return {g: group_bytes[g] / tot_b - group_flows[g] / tot_n for g in group_bytes}


# ---------------------------------------------------------------------------- rates and counts


def rate_bps(nbytes: float, duration_s: float) -> float:
    """Average rate ``8 * bytes / duration`` in bit/s (BBR-ACW Eq. 4, x-bar).

    Used with a flow's received bytes (throughput: every data byte reaching the receiver,
    duplicates included, BBR-ACD Sec. 3.4) or delivered bytes (goodput: in-order bytes to
    the application, each once) over the flow's active time."""
    return 8.0 * nbytes / duration_s if duration_s > 0 else math.nan


def retransmission_rate(retransmitted: float, sent: float) -> float:
    """Segments sent more than once over segments sent (TUM Sec. 3.4); NaN if none sent."""
    return float(retransmitted) / float(sent) if sent > 0 else math.nan


def in_force_order(events: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Events in the order the engine applies them: by time, and at one instant in file
    order (the engine's queue is first-in first-out among equal times), so the last one
    listed at an instant is the rate in force after it. Sorting the pairs would order
    equal instants by rate instead (100 then 1 Mbit/s at 1 s was taken as
    100 Mbit/s from 1 s on, and utilisation came out 0.16 instead of ~0.92)."""
    return sorted(events, key=lambda e: e[0])


def trace_bits(trace: Any, t_s: float) -> float:
    """Bits a traced link (specs/traces.py TraceRate) can deliver over ``[0, t_s]``: its
    delivery opportunities up to then, the trace repeating with its period (the last
    timestamp), 1500 bytes each (crates/sim/src/net/trace.rs)."""

    opp = trace.opportunities_ms
    period_ms = opp[-1]
    t_ms = max(0.0, t_s) * 1e3
    full, rest = divmod(t_ms, period_ms)
    count = full * len(opp) + bisect.bisect_right(opp, rest)
    return count * OPPORTUNITY_BYTES * 8.0


def _is_trace(rate: Any) -> bool:
    return hasattr(rate, "opportunities_ms")


def capacity_bits(
    rate_bps0: float, events: Sequence[tuple[float, float]], duration_s: float
) -> float:
    """Bits the bottleneck could carry over ``[0, duration_s]``: the integral of its rate,
    which starts at ``rate_bps0`` and changes to ``r`` at each ``(at_s, r)`` event. A
    traced link (which takes no rate events) counts its opportunities up to then: its
    mean rate over a whole period overstated a run shorter than the period, whose
    utilisation came out 8.65."""
    if _is_trace(rate_bps0):
        return trace_bits(rate_bps0, duration_s)
    total, t, r = 0.0, 0.0, float(rate_bps0)
    for at, new in in_force_order(events):
        at = min(max(at, 0.0), duration_s)
        total += r * (at - t)
        t, r = at, float(new)
    return total + r * (duration_s - t)


def utilization(goodput_bytes_total: float, capacity: float) -> float:
    """Channel utilisation eta = sum of all flows' goodput bits / bottleneck capacity bits
    over the run (BBR-ACW Eq. 3; capacity from :func:`capacity_bits`)."""
    return 8.0 * goodput_bytes_total / capacity if capacity > 0 else math.nan


def rate_at(
    times_s: np.ndarray, rate_bps0: float, events: Sequence[tuple[float, float]]
) -> np.ndarray:
    """The bottleneck rate in force at each time (events apply from their instant on). A
    traced link's rate is its mean over ``[0, the last time]`` (the run or window the
    samples cover), not over the trace's whole period: a run shorter than the period
    reported 634 ms of queueing delay behind a 100-packet buffer."""
    t = np.asarray(times_s, dtype=float)
    if _is_trace(rate_bps0):
        end = float(t.max()) if t.size else 0.0
        mean = trace_bits(rate_bps0, end) / end if end > 0 else float(rate_bps0)
        return np.full(t.size, mean if mean > 0 else float(rate_bps0))
    out = np.full(t.size, float(rate_bps0))
    for at, new in in_force_order(events):
        out[t >= at] = float(new)
    return out


def queueing_delay_ms(backlog_bytes: Sequence[float], rate_bps_now: Sequence[float]) -> np.ndarray:
    """Queueing delay at each sample: backlog (wire bytes) / bottleneck rate, in ms
    (BBR-ACW Sec. 5.4): the time the last queued byte waits to be sent."""
    b = np.asarray(backlog_bytes, dtype=float)
    r = np.asarray(rate_bps_now, dtype=float)
    return 8.0 * b / r * 1e3


def rtt_stats(rtt_ms: Sequence[float]) -> tuple[float, float]:
    """Mean and 95th percentile of the sampled RTTs (ms), NaN samples (no ACK in the
    interval) skipped. tcplab's series hold one RTT per interval per flow (the TUM
    framework likewise averages per interval, Sec. 3.4), so these are over intervals."""
    a = np.asarray(rtt_ms, dtype=float)
    a = a[~np.isnan(a)]
    if a.size == 0:
        return math.nan, math.nan
    return float(a.mean()), float(np.percentile(a, 95))


def bdp_overestimation(
    inflight_pkts_total: Sequence[float],
    wire_bytes: int,
    rate_bps_now: Sequence[float],
    rtprop_s: float,
) -> np.ndarray:
    """Summed inflight of all flows over the BDP, ``inflight * wire / (rate * RTprop / 8)``
    at each sample; BBR keeps about 2-2.5 when several flows compete (TUM Sec. 4.3;
    Hock et al. 2017)."""
    inflight = np.asarray(inflight_pkts_total, dtype=float) * wire_bytes
    bdp = np.asarray(rate_bps_now, dtype=float) * rtprop_s / 8.0
    return inflight / bdp


def probe_rtt_overlap_s(
    modes: pd.DataFrame, interval_s: float, probe_rtt: str = "PROBE_RTT"
) -> float:
    """Seconds during which every BBR flow is in PROBE_RTT at once (TUM Sec. 4.3.1):
    the number of sample times at which all columns of ``modes`` (one per BBR flow, mode
    labels; missing = flow not running) equal ``probe_rtt``, times ``interval_s``."""
    if modes.empty:
        return math.nan
    # All columns as one string Series (one vectorised upper() instead of one per flow).
    flat = pd.Series(modes.to_numpy(dtype=object).ravel()).astype("string").str.upper()
    missing = flat.isna().to_numpy(dtype=bool).reshape(modes.shape)
    probing = (flat == probe_rtt.upper()).fillna(False).to_numpy(dtype=bool).reshape(modes.shape)
    running = (~missing).any(axis=1)
    allprobe = (missing | probing).all(axis=1) & running
    return float(allprobe.sum()) * interval_s
