"""summary.json: per-flow and aggregate metrics of one run, composed from
:mod:`tcplab.analysis.metrics`; the per-flow rows come from
:mod:`tcplab.analysis.per_flow` (all flows at once). Units are in the key names; every
key is listed, with its definition, in :mod:`tcplab.metric_table`."""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from tcplab.analysis import metrics as m
from tcplab.analysis.caveats import run_warnings
from tcplab.analysis.per_flow import (
    BW_ESTIMATE_COLUMNS,
    MODE_COLUMNS,
    bw_estimate_column,
    flow_metrics,
    mode_column,
    window_flows,
)
from tcplab.analysis.rundata import RunData
from tcplab.metric_table import AGGREGATE, AGGREGATE_KEYS
from tcplab.specs.algorithms import registry
from tcplab.specs.probes import names as probe_names
from tcplab.specs.probes import summary as probes_summary
from tcplab.specs.sources import summary as sources_summary

__all__ = [
    "AGGREGATE_KEYS",
    "BW_ESTIMATE_COLUMNS",
    "MODE_COLUMNS",
    "bw_estimate_column",
    "flow_metrics",
    "mode_column",
    "summarize",
]


def _clean(x: Any) -> Any:
    """JSON-safe: NaN/inf become None, numpy scalars become Python numbers."""
    t = type(x)  # the common cases first: a summary holds ~40 numbers per flow
    if t is float:
        return x if math.isfinite(x) else None
    if t is int or t is str or x is None:
        return x
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def fct_summary(per_flow: pd.DataFrame) -> dict[str, Any]:
    """Flow completion times of the finite flows: how many finished, mean and percentiles
    (numpy's linear interpolation) over those that did."""
    fct = per_flow["fct_s"].dropna() if "fct_s" in per_flow else pd.Series(dtype=float)
    finite = int(per_flow["size_bytes"].notna().sum()) if "size_bytes" in per_flow else 0
    out: dict[str, Any] = {"finite_flows": finite, "completed": int(len(fct))}
    for name, q in (("mean_s", None), ("p50_s", 50), ("p95_s", 95), ("p99_s", 99)):
        out[name] = (
            (float(fct.mean()) if q is None else float(np.percentile(fct, q)))
            if len(fct)
            else math.nan
        )
    return out


def summarize(run: RunData) -> dict[str, Any]:
    """The whole summary.json document for a run."""
    per_flow = flow_metrics(run)
    spec = run.spec
    dur = run.duration_s
    agg = aggregate(AggregateInputs(run, per_flow))
    groups: dict[str, Any] = {}
    if not per_flow.empty:
        gb = per_flow.groupby("cc")["received_bytes"].sum().to_dict()
        gn = per_flow.groupby("cc").size().to_dict()
        diff = m.share_vs_fair_share(
            {k: float(v) for k, v in gb.items()}, {k: int(v) for k, v in gn.items()}
        )
        total_bytes = float(sum(gb.values()))
        groups = {
            cc: {
                "flows": int(gn[cc]),
                # Undefined (null), as the flows' shares are, when nothing was received:
                # a 0.0 here was averaged by sweeps as if the algorithm had lost.
                "share": float(gb[cc]) / total_bytes if total_bytes > 0 else math.nan,
                "share_minus_fair_share": diff[cc],
            }
            for cc in gb
        }
    doc = {
        "experiment": spec.experiment.name,
        "seed": spec.experiment.seed,
        "duration_s": dur,
        "flows": [dict(flow=int(i), **r) for i, r in per_flow.to_dict(orient="index").items()],
        "aggregate": agg,
        "by_cc": groups,
        "queues": run.queues,
        "engine": run.extra,
    }

    if warnings := run_warnings(run.extra):
        doc["warnings"] = warnings
    if spec.links and not per_flow.empty:
        doc["links"] = link_utilization(run, per_flow, dur)
    if spec.experiment.analysis is not None:
        doc["window"] = window_metrics(run, *spec.experiment.analysis_s(dur))
    if spec.experiment.windows:
        doc["windows"] = {
            name: window_metrics(run, t0, t1)
            for name, (t0, t1) in spec.experiment.windows_s().items()
        }
    if not per_flow.empty and "fct_s" in per_flow:
        doc["fct"] = fct_summary(per_flow)
    if run.sources:  # constant-rate sources, apart from the TCP flows (specs/sources.py)
        doc["sources"] = sources_summary(run.sources, dur)
    if run.probes:  # latency probes' counters and RTT statistics (specs/probes.py)
        doc["probes"] = probes_summary(run.probes, probe_names(run.spec))
    return _clean(doc)


class AggregateInputs:
    """What the aggregate rows read, each computed once per run on first use: the run,
    its per-flow table, and the series several rows share (the flows' fairness over
    time, the bottleneck queue, the BBR modes)."""

    def __init__(self, run: RunData, per_flow: pd.DataFrame) -> None:
        self.run = run
        self.per_flow = per_flow
        self.spec = run.spec
        self.dur = run.duration_s
        self.b = run.spec.bottleneck
        # The bottleneck's rate and rate changes as the engine ran them (rundata.link).
        self.rate = run.bottleneck_rate()
        self.events = run.bottleneck_events()
        self.q = run.queue

    @functools.cached_property
    def thr(self) -> pd.DataFrame:
        return self.run.wide("throughput_bps")

    @functools.cached_property
    def fairness(self) -> pd.Series | None:
        """Jain's index of the active flows at each sample (TUM Sec. 3.4), where there is
        a throughput series and two flows or more; else None."""
        if self.thr.empty or len(self.run.flows) < 2:
            return None
        return m.jain_over_time(self.thr, self.run.flows)

    @functools.cached_property
    def t_join(self) -> float:
        return float(self.run.flows["start_s"].max())

    @functools.cached_property
    def has_backlog(self) -> bool:
        return not self.q.empty and "backlog_pkts" in self.q

    @functools.cached_property
    def bottleneck_queue(self) -> dict[str, Any] | None:
        return next((x for x in self.run.queues if x.get("name") == "bottleneck"), None)

    @functools.cached_property
    def modes(self) -> pd.DataFrame | None:
        return bbr_modes(self.run)


# One function per row of metric_table.AGGREGATE, named by the row's ``compute``; each
# returns NaN (null in summary.json) where its metric is undefined for the run.


def aggregate_jain_index(x: AggregateInputs) -> Any:
    if x.per_flow.empty or len(x.per_flow) < 2:
        return math.nan
    return m.jain_index(x.per_flow["throughput_bps"])


def aggregate_jain_index_mean(x: AggregateInputs) -> Any:
    fair = x.fairness
    if fair is None:
        return math.nan
    return float(np.nanmean(fair)) if fair.notna().any() else math.nan


def aggregate_utilization(x: AggregateInputs) -> Any:
    if x.per_flow.empty:
        return math.nan
    # Only the flows whose data crosses the bottleneck count against its capacity:
    # flows routed over other [[links]] only made it 4.38 with an idle bottleneck.
    # Each of those links has its own figure (doc["links"]).
    pf = x.per_flow
    through = pf[[crosses(x.spec, g, "bottleneck") for g in pf["group"]]]
    return m.utilization(
        float(through["delivered_bytes"].sum()), m.capacity_bits(x.rate, x.events, x.dur)
    )


def aggregate_total_goodput_bps(x: AggregateInputs) -> Any:
    if x.per_flow.empty:
        return math.nan
    return m.rate_bps(float(x.per_flow["delivered_bytes"].sum()), x.dur)


def aggregate_total_throughput_bps(x: AggregateInputs) -> Any:
    if x.per_flow.empty:
        return math.nan
    return m.rate_bps(float(x.per_flow["received_bytes"].sum()), x.dur)


def aggregate_retransmitted_packets(x: AggregateInputs) -> Any:
    if x.per_flow.empty:
        return math.nan
    return int(x.per_flow["retransmitted_packets"].sum())


def aggregate_retransmission_rate(x: AggregateInputs) -> Any:
    if x.per_flow.empty:
        return math.nan
    return m.retransmission_rate(
        aggregate_retransmitted_packets(x), x.per_flow["sent_packets"].sum()
    )


def aggregate_mean_backlog_pkts(x: AggregateInputs) -> Any:
    return float(x.q["backlog_pkts"].mean()) if x.has_backlog else math.nan


def aggregate_max_backlog_pkts(x: AggregateInputs) -> Any:
    return float(x.q["backlog_pkts"].max()) if x.has_backlog else math.nan


def aggregate_p10_backlog_pkts(x: AggregateInputs) -> Any:
    return persistent_backlog_pkts(x.q["backlog_pkts"]) if x.has_backlog else math.nan


def aggregate_mean_queueing_delay_ms(x: AggregateInputs) -> Any:
    if not x.has_backlog or "backlog_bytes" not in x.q:
        return math.nan
    rates = m.rate_at(x.q["time_s"].to_numpy(), x.rate, x.events)
    return float(np.mean(m.queueing_delay_ms(x.q["backlog_bytes"], rates)))


def aggregate_bottleneck_drops_packets(x: AggregateInputs) -> Any:
    bq = x.bottleneck_queue
    return int(bq.get("dropped", 0)) if bq is not None else math.nan


def aggregate_marked_packets(x: AggregateInputs) -> Any:
    # CE marks by the bottleneck's qdisc; null without one (drop-tail never marks).
    bq = x.bottleneck_queue
    if bq is None or x.b.aqm is None:
        return math.nan
    return int(bq.get("marked", 0))


def aggregate_mean_sojourn_ms(x: AggregateInputs) -> Any:
    # Queueing delay measured per packet by the qdisc (only recorded with an aqm).
    q = x.q
    if q.empty or "sojourn_ms" not in q or not q["sojourn_ms"].notna().any():
        return math.nan
    return float(q["sojourn_ms"].mean())


def aggregate_t_join_s(x: AggregateInputs) -> Any:
    return x.t_join if x.fairness is not None else math.nan


def aggregate_t_f95_s(x: AggregateInputs) -> Any:
    fair = x.fairness
    if fair is None:
        return math.nan
    return m.t_f95(fair.index, fair.to_numpy(), x.t_join, interval_s=x.run.interval_s)


def aggregate_f_avg(x: AggregateInputs) -> Any:
    fair = x.fairness
    return m.f_avg(fair.index, fair.to_numpy(), x.t_join) if fair is not None else math.nan


def aggregate_equilibrium_time_s(x: AggregateInputs) -> Any:
    if x.fairness is None:
        return math.nan
    return m.equilibrium_time(x.thr, x.run.flows, x.t_join)


def aggregate_bdp_overestimation_mean(x: AggregateInputs) -> Any:
    infl = x.run.wide("inflight_pkts")
    if infl.empty or not x.b.bdp_rtt:
        return math.nan
    total = infl.fillna(0).sum(axis=1)
    rates = m.rate_at(total.index.to_numpy(), x.rate, x.events)
    tcp = x.spec.tcp
    ratio = m.bdp_overestimation(total, tcp.mss + tcp.header, rates, x.b.bdp_rtt / 1e9)
    return float(np.mean(ratio))


def aggregate_probe_rtt_overlap_s(x: AggregateInputs) -> Any:
    modes = x.modes
    return m.probe_rtt_overlap_s(modes, x.run.interval_s) if modes is not None else math.nan


def aggregate_bw_estimate_sum_over_rate_mean(x: AggregateInputs) -> Any:
    modes = x.modes
    return bw_estimate_sum_over_rate(x.run, modes, x.events) if modes is not None else math.nan


def aggregate_probe_rtt_sync_s(x: AggregateInputs) -> Any:
    modes = x.modes
    if modes is None:
        return math.nan
    return probe_rtt_sync_s(modes, x.run.flows.loc[modes.columns, "start_s"])


@functools.cache
def _row_functions() -> dict[str, Callable[[AggregateInputs], Any]]:
    """Each AGGREGATE row's ``compute`` resolved: the table names the function that fills
    its key (``analysis.summary.aggregate_NAME``), and this is what calls it."""
    out = {}
    for row in AGGREGATE:
        module, _, name = ("tcplab." + row.compute).rpartition(".")
        out[row.name] = getattr(importlib.import_module(module), name)
    return out


def aggregate(x: AggregateInputs) -> dict[str, Any]:
    """summary.json's ``aggregate`` block: every row of metric_table.AGGREGATE, in its
    order, each by the function its row names."""
    fns = _row_functions()
    return {row.name: fns[row.name](x) for row in AGGREGATE}


def persistent_backlog_pkts(backlog: pd.Series) -> float:
    """The 10th percentile of the sampled backlog: the queue that does not drain (TUM Sec.
    4.4, Figs. 13-14, a "persistent queue" that grows with the number of BBR flows). A low
    percentile rather than the minimum, so that one sample at a PROBE_RTT dip or at the
    start does not decide it."""
    v = pd.to_numeric(backlog, errors="coerce").dropna()
    return float(np.percentile(v, 10)) if len(v) else math.nan


def probe_rtt_sync_s(modes: pd.DataFrame, starts_s: pd.Series) -> float:
    """Time from the last BBR-family flow's start to the first sample at which all of
    them are in PROBE_RTT at once: when their Probe RTT phases have synchronised (TUM Sec.
    6.4, Fig. 19: "The synchronization itself ... happens at most after 10s"). Needs at
    least two such flows; NaN if they never coincide. Resolution: one sample interval (a
    Probe RTT phase lasts 200 ms plus a round, so sample at 200 ms or finer)."""
    if modes.shape[1] < 2:
        return math.nan
    t_join = float(starts_s.max())
    after = modes.index.to_numpy(dtype=float) >= t_join
    labels = modes.to_numpy(dtype=object, na_value=None)[after]
    together = (labels == "PROBE_RTT").all(axis=1)
    hits = modes.index[after][together]
    return float(hits[0]) - t_join if len(hits) else math.nan


def bw_estimate_sum_over_rate(run: RunData, modes: pd.DataFrame, events: Any) -> float:
    """Mean over the samples at which every BBR-family flow is active and past start-up
    (PROBE_BW or PROBE_RTT) of the sum of their bandwidth estimates over the bottleneck
    rate (TUM Sec. 4.3, Fig. 6: the summed BtlBw estimates exceed the link's capacity,
    the root of the 2-2.5 BDP inflight). NaN without such a sample."""
    col = bw_estimate_column(run.series)
    if col is None:
        return math.nan
    est = run.series[run.series["flow"].isin(modes.columns)].drop_duplicates(["time_s", "flow"])
    wide = est.pivot(index="time_s", columns="flow", values=col).reindex(
        index=modes.index, columns=modes.columns
    )
    labels = modes.to_numpy(dtype=object, na_value=None)
    past_startup = ((labels == "PROBE_BW") | (labels == "PROBE_RTT")).all(axis=1)
    steady = pd.Series(past_startup, index=modes.index) & wide.notna().all(axis=1)
    if not steady.any():
        return math.nan
    total = wide[steady].astype(float).sum(axis=1)
    rates = m.rate_at(total.index.to_numpy(dtype=float), run.bottleneck_rate(), events)
    return float(np.mean(total.to_numpy() / rates))


def _downstream_delay_s(run: RunData, flow: int, group: Any) -> float:
    """One-way propagation delay (s) from the bottleneck's sending side to flow ``flow``'s
    receiver (of group ``group``): the bottleneck, the path's later hops, the receiver
    access, each as the engine built it (rundata.link_delay_ns; the spec's for a run
    stored before the engine reported its links)."""
    spec = run.spec
    f = spec.flows[int(group)]
    hops = list(f.path or ["bottleneck"])
    after = hops[hops.index("bottleneck") :] if "bottleneck" in hops else hops
    rcv = f.receiver_access.delay if f.receiver_access and f.receiver_access.delay else 0
    rcv = run.link_delay_ns(f"flow{flow}.receiver_access", rcv)
    return (sum(run.link_delay_ns(h, spec.link_delay(h)) for h in after) + rcv) / 1e9


def crosses(spec: Any, group: Any, link: str) -> bool:
    """Whether flow group ``group``'s data crosses the link direction ``link`` (a flow's
    ``path``; absent: the bottleneck alone)."""
    g = int(group)
    path = spec.flows[g].path if 0 <= g < len(spec.flows) else None
    return link in (path or ["bottleneck"])


def link_utilization(run: RunData, per_flow: pd.DataFrame, dur: float) -> dict[str, Any]:
    """Each [[links]] entry's data direction: the goodput of the flows crossing it over its
    capacity (rate x duration), so that no figure counts flows that never used the link.
    Goodput, not what the link carried: a link's utilisation is below 1 whenever some of
    what it carried was lost later on the path. The rate is the engine's
    (rundata.link_rate)."""
    spec = run.spec
    out: dict[str, Any] = {}
    for ln in spec.links:
        through = per_flow[[crosses(spec, g, ln.name) for g in per_flow["group"]]]
        out[ln.name] = {
            "flows": len(through),
            "utilization": m.utilization(
                float(through["delivered_bytes"].sum()),
                m.capacity_bits(run.link_rate(ln.name, ln.rate), [], dur),
            ),
        }
    return out


def window_metrics(run: RunData, t0: float, t1: float) -> dict[str, Any]:
    """Metrics over the analysis window ``(t0, t1]`` (``[experiment] analysis``), from the
    sampled series: the papers that average "after the start-up" (BBR-ACW Sec. 5.2:
    "after bandwidth stabilization"; TUM Fig. 8: "retransmission rate after 25 s") measure
    over part of the run. Per flow: mean throughput and goodput over the samples in the
    window while the flow runs, retransmissions summed, mean RTT; aggregate: Jain of the
    mean throughputs, utilisation (goodput / capacity of the window), retransmissions,
    mean backlog and queueing delay; per algorithm: share of the summed throughput."""
    flows, thr, sel = window_flows(run, t0, t1)
    shares = m.share([0.0 if math.isnan(x) else x for x in thr]) if thr else []
    for fl, sh in zip(flows, shares):
        fl["share"] = sh
    valid = [x for x in thr if not math.isnan(x)]
    agg: dict[str, Any] = {
        "jain_index": m.jain_index(valid) if len(valid) >= 2 else math.nan,
        "retransmitted_packets": sum(f["retransmitted_packets"] for f in flows),
    }

    # Bits delivered in the window: each sample's goodput over its interval. Summing the
    # flows' mean goodputs (means over each flow's active samples) and multiplying by
    # the window's length counted a flow that ran for part of the window as running
    # throughout (1.25 on a 10 Mbit/s link whose whole-run figure was 0.96).
    def bits_of(rows: pd.DataFrame, col: str) -> float:
        if col not in rows or not len(rows):
            return 0.0
        return float(np.nansum(rows[col].to_numpy(dtype=float))) * run.interval_s

    group_of = dict(zip(run.flows.index, run.flows["group"]))
    through = [int(fid) for fid, g in group_of.items() if crosses(run.spec, g, "bottleneck")]
    bits = bits_of(sel, "goodput_bps")
    # Utilisation over a window counts what reached the receivers in it (throughput), not
    # goodput: data received before the window but held back behind a loss is released
    # in order within it, and the window's goodput then exceeds what the link could carry
    # in it (1.08 in tests/cli/test_fuzz.py). Over the whole run the two agree on the bound.
    on_bottleneck = sel[sel["flow"].isin(through)] if "flow" in sel else sel
    bits_through = bits_of(on_bottleneck, "throughput_bps")
    events = run.bottleneck_events()
    # The bits that reached the receivers in [t0, t1] left the bottleneck a downstream
    # propagation delay d earlier (the bottleneck's own delay, the links after it, the
    # receiver's access link): their capacity is that of [t0 - d_max, t1 - d_min], the
    # union of the window shifted back by each flow's d. Against [t0, t1] itself a rate
    # drop at the window's start left up to d x (old - new rate) bits over capacity
    # (utilisation 1.04 in tests/cli/test_fuzz.py).
    delays = [_downstream_delay_s(run, f, group_of[f]) for f in through]
    d_min, d_max = (min(delays), max(delays)) if delays else (0.0, 0.0)
    lo, hi = max(0.0, t0 - d_max), max(0.0, t1 - d_min)
    rate = run.bottleneck_rate()
    cap = m.capacity_bits(rate, events, hi) - m.capacity_bits(rate, events, lo)
    # A window that holds no sample measured nothing: undefined, not 0.0.
    agg["utilization"] = bits_through / cap if cap > 0 and len(sel) else math.nan
    agg["total_goodput_bps"] = bits / (t1 - t0) if t1 > t0 and len(sel) else math.nan
    q = run.queue
    if not q.empty and "backlog_pkts" in q:
        qs = q[(q["time_s"] > t0 + 1e-12) & (q["time_s"] <= t1 + 1e-12)]
        agg["mean_backlog_pkts"] = float(qs["backlog_pkts"].mean()) if len(qs) else math.nan
        agg["p10_backlog_pkts"] = persistent_backlog_pkts(qs["backlog_pkts"])
        if "backlog_bytes" in qs and len(qs):
            rates = m.rate_at(qs["time_s"].to_numpy(), rate, events)
            agg["mean_queueing_delay_ms"] = float(
                np.mean(m.queueing_delay_ms(qs["backlog_bytes"], rates))
            )
    by_cc: dict[str, Any] = {}
    total = sum(valid)
    for fl in flows:
        g = by_cc.setdefault(fl["cc"], {"flows": 0, "share": 0.0 if total > 0 else math.nan})
        g["flows"] += 1
        if total > 0 and not math.isnan(fl["throughput_bps"]):
            g["share"] += fl["throughput_bps"] / total
    return {"from_s": t0, "to_s": t1, "flows": flows, "aggregate": agg, "by_cc": by_cc}


BBR_FAMILIES = ("bbr", "bbr3")
"""Algorithm families whose flows report BBR's modes (STARTUP, DRAIN, PROBE_BW, PROBE_RTT)."""


def family(cc: str) -> str | None:
    """The registry's family of an algorithm (``crates/cc/src/registry.rs``), or None for a
    name it does not know."""

    algo = registry().get(cc)
    return algo.family if algo is not None else None


def bbr_modes(run: RunData) -> pd.DataFrame | None:
    """Mode labels of the BBR-family flows (one column per flow, Python strings; missing
    where a flow has no mode or is not running), or None if none report it."""
    col = mode_column(run.series)
    if col is None:
        return None
    ids = [i for i, cc in zip(run.flows.index, run.flows["cc"]) if family(str(cc)) in BBR_FAMILIES]
    if not ids:
        return None
    sel = run.series.loc[run.series["flow"].isin(ids), ["time_s", "flow", col]]
    sel = sel.drop_duplicates(["time_s", "flow"])
    # The wide table by numpy (as RunData.wide does for numbers), of Python objects (a
    # missing mode is None): one 2-D block, where pandas' pivot of the text column held
    # one array per flow and every comparison on it ran flow by flow.
    t = sel["time_s"].to_numpy(dtype=float)
    fl = sel["flow"].to_numpy()
    times, t_pos = np.unique(t, return_inverse=True)
    flows, f_pos = np.unique(fl, return_inverse=True)
    bounds = run.flows.reindex(fl)
    # A flow outside its [start, stop] has no mode (m.active_mask).
    active = m.active_mask(
        t, bounds["start_s"].to_numpy(dtype=float), bounds["stop_s"].to_numpy(dtype=float)
    )
    values = sel[col].to_numpy(dtype=object, na_value=None)
    labels = np.full((len(times), len(flows)), None, dtype=object)
    labels[t_pos[active], f_pos[active]] = values[active]
    return pd.DataFrame(
        labels,
        index=pd.Index(times, name="time_s"),
        columns=pd.Index(flows, name="flow"),
        dtype=object,
    )
