"""The table of summary.json's metrics: each one's name, scope, the function that computes
it, its unit, a one-sentence definition and where it is shown. Every list of metric names
elsewhere is derived from it: the keys a ``[[checks]]`` expression may use
(specs/checks.py), the aggregate block's keys in summary.json (analysis/summary.py), the
metrics ``tcplab compare`` tabulates, a sweep's default metrics, the run report's summary
panel, and the generated table in docs/METRICS.md (tests/analysis/test_metric_table.py fails when
the doc and this table differ; ``python -m tcplab.metric_table docs/METRICS.md`` rewrites
it).

To add a metric: add its row here (naming where it is shown) and the function its row's
``compute`` names; an aggregate row's function (analysis/summary.py ``aggregate_NAME``,
over all flows at once) is called by ``summary.aggregate`` from the row itself, so that is
all; a per-flow one is a column of analysis/per_flow.py. Then regenerate docs/METRICS.md.

A leaf: it imports nothing from tcplab, so every stage (the spec's check grammar first)
can read it. The unit rule by name suffix lives here too for that reason
(:func:`unit`; report/units.py is its name in the reports).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MBIT = 1e6

SCOPES = {
    "aggregate": "summary.json `aggregate`",
    "flow": "summary.json `flows[]`, one entry per flow",
    "by_cc": "summary.json `by_cc`, per algorithm",
    "fct": "summary.json `fct`, with finite `size` flows",
    "link": "summary.json `links`, per `[[links]]` entry",
    "window": "`window` (`[experiment] analysis`) and `windows.NAME`: `aggregate`",
    "window_flow": "`window` and `windows.NAME`: `flows[]`",
    "window_by_cc": "`window` and `windows.NAME`: `by_cc`",
    "probe": "summary.json `probes[]`, per `[[probes]]` entry: `NAME[probe]` names the probe's (`probe_median_rtt_ms[ping]`)",
}


def unit(name: str) -> tuple[float, str]:
    """Divisor and unit text of a column (``cc_min_rtt_us``) or a metric expression
    (``goodput_bps[flow0]``, ``window.share[bbr]``), read from the name's suffix: value /
    divisor is in that unit. One rule for every plot and table (run, sweep, HTML, compare),
    so the same quantity is shown in the same unit everywhere."""
    base = name.split("[")[0].rsplit(".", 1)[-1]
    if base.endswith("_bps"):
        return MBIT, "Mbit/s"
    if base.endswith("_us"):
        return 1e3, "ms"
    if base.endswith("_ns"):
        return 1e6, "ms"
    if base.endswith("_ms"):
        return 1.0, "ms"
    if base.endswith("_s"):
        return 1.0, "s"
    if base.endswith("_pkts") or base.endswith("_packets"):
        return 1.0, "packets"
    if base in ("share", "utilization", "share_minus_fair_share") or base.endswith("_rate"):
        return 1.0, "fraction"
    if base.startswith("jain") or base == "f_avg":
        return 1.0, "index, 1 = fair"
    return 1.0, ""


@dataclass(frozen=True)
class Panel:
    """A metric's place in the run report's summary panel: ``line`` (metrics on one line
    are printed side by side, in table order), its label and number format."""

    line: int
    label: str
    fmt: str


@dataclass(frozen=True)
class Metric:
    """One metric of summary.json.

    ``compute`` is the function (under ``tcplab.``) that computes it; ``source`` the paper
    section or ``tcplab`` for a definition of ours; ``key`` the summary.json key when it
    differs from the name (a probe's ``median_ms`` is ``probe_median_rtt_ms``). Where it is shown: ``checks`` (a
    ``[[checks]]`` / catalogue expression may name it; a per-flow one as ``NAME[flowN]``
    and ``NAME[cc]``, where ``summed`` adds the group's flows up instead of averaging
    them; a probe one as ``NAME[probe]``), ``compare`` and ``sweep`` (position in ``tcplab compare``'s table and in a
    sweep's default metrics), ``panel`` (the run report's summary panel). summary.json and
    report.html show every metric.
    """

    name: str
    scope: str
    compute: str
    definition: str
    source: str = "tcplab"
    key: str | None = None
    checks: bool = False
    summed: bool = False
    compare: int | None = None
    sweep: int | None = None
    panel: Panel | None = None

    @property
    def unit(self) -> str:
        return unit(self.name)[1]

    @property
    def shown(self) -> list[str]:
        """Where it is shown besides summary.json and report.html."""
        out = ["checks"] if self.checks else []
        out += ["compare"] if self.compare is not None else []
        out += ["sweep default"] if self.sweep is not None else []
        out += ["report panel"] if self.panel is not None else []
        return out


def _m(name: str, scope: str, compute: str, definition: str, **kw: Any) -> Metric:
    return Metric(name, scope, compute, definition, **kw)


S = "analysis.summary."
M = "analysis.metrics."
F = "analysis.per_flow."

# One metric per row: name, scope, function; definition; source and where it is shown.
# fmt: off
# The aggregate block, in summary.json's order.
AGGREGATE = [
    _m("jain_index", "aggregate", S + "aggregate_jain_index",
       "F_tp: Jain's index (sum x)^2 / (n sum x^2) of the flows' mean throughputs over their active time; null for one flow.",
       source="Jain 1984, TUM Sec. 5.1", checks=True, compare=3, sweep=2, panel=Panel(3, "Jain F_tp", ".3f")),
    _m("jain_index_mean", "aggregate", S + "aggregate_jain_index_mean",
       "Mean of F, Jain's index of the active flows' throughputs at each sample.",
       source="TUM Sec. 3.4", checks=True, panel=Panel(3, "mean F", ".3f")),
    _m("utilization", "aggregate", S + "aggregate_utilization",
       "Goodput bits of the flows crossing the bottleneck over the bits its rate (with `[[events]]`) could carry in the run.",
       source="BBR-ACW Eq. 3", checks=True, compare=1, sweep=3, panel=Panel(2, "utilization", ".3f")),
    _m("total_goodput_bps", "aggregate", S + "aggregate_total_goodput_bps",
       "All flows' in-order delivered bytes x 8 over the run's duration.",
       source="BBR-ACD Sec. 3.4", checks=True, compare=2, sweep=1, panel=Panel(1, "total goodput", ".2f")),
    _m("total_throughput_bps", "aggregate", S + "aggregate_total_throughput_bps",
       "All flows' bytes reaching the receivers (duplicates included) x 8 over the run's duration.",
       source="BBR-ACD Sec. 3.4", checks=True),
    _m("retransmitted_packets", "aggregate", S + "aggregate_retransmitted_packets",
       "Segments sent more than once, summed over the flows.",
       source="TUM Sec. 3.4", checks=True, compare=4, sweep=4, panel=Panel(5, "retransmitted", ".0f")),
    _m("retransmission_rate", "aggregate", S + "aggregate_retransmission_rate",
       "Retransmitted segments over segments sent, all flows together.",
       source="TUM Sec. 3.4", checks=True, compare=5),
    _m("mean_backlog_pkts", "aggregate", S + "aggregate_mean_backlog_pkts",
       "Mean of the bottleneck queue's sampled backlog.",
       checks=True, compare=6, panel=Panel(6, "mean backlog", ".1f")),
    _m("max_backlog_pkts", "aggregate", S + "aggregate_max_backlog_pkts",
       "Largest sampled backlog of the bottleneck queue.",
       checks=True, compare=7, panel=Panel(6, "max", ".0f")),
    _m("mean_queueing_delay_ms", "aggregate", S + "aggregate_mean_queueing_delay_ms",
       "Mean over the queue samples of backlog bytes over the bottleneck rate in force.",
       source="BBR-ACW Sec. 5.4", checks=True, compare=8, sweep=5, panel=Panel(7, "queueing delay", ".2f")),
    _m("bottleneck_drops_packets", "aggregate", S + "aggregate_bottleneck_drops_packets",
       "Packets the bottleneck queue dropped (the engine's `dropped` counter of the bottleneck).",
       checks=True, compare=9),
    _m("t_join_s", "aggregate", S + "aggregate_t_join_s",
       "T_join: the start of the last flow.",
       source="TUM Sec. 6.2", checks=True),
    _m("t_f95_s", "aggregate", S + "aggregate_t_f95_s",
       "T_F95: seconds after T_join from which F stays >= 0.95, dips of at most 2 s allowed.",
       source="TUM Sec. 6.2", checks=True, panel=Panel(4, "T_F95", ".1f")),
    _m("f_avg", "aggregate", S + "aggregate_f_avg",
       "F_avg: the mean of F over (T_join, T_join + 30 s].",
       source="TUM Sec. 6.2", checks=True, panel=Panel(4, "F_avg", ".3f")),
    _m("equilibrium_time_s", "aggregate", S + "aggregate_equilibrium_time_s",
       "T_F95 computed on throughput averaged over 1 s bins: the time to almost equal shares after a flow joins.",
       source="BBR-ACD Sec. 3.2", checks=True),
    _m("bdp_overestimation_mean", "aggregate", S + "aggregate_bdp_overestimation_mean",
       "Mean over the samples of the flows' summed inflight (wire bytes) over the BDP (bottleneck rate x `bdp_rtt`, the RTT `bdp` sizes refer to).",
       source="TUM Sec. 4.3, Hock et al. 2017", checks=True, compare=10),
    _m("probe_rtt_overlap_s", "aggregate", S + "aggregate_probe_rtt_overlap_s",
       "Seconds during which every running BBR-family flow is in PROBE_RTT at once.",
       source="TUM Sec. 4.3.1", checks=True, compare=11),
    _m("p10_backlog_pkts", "aggregate", S + "aggregate_p10_backlog_pkts",
       "The 10th percentile of the sampled backlog: the persistent queue that does not drain.",
       source="TUM Sec. 4.4", checks=True),
    _m("bw_estimate_sum_over_rate_mean", "aggregate", S + "aggregate_bw_estimate_sum_over_rate_mean",
       "Mean, over the samples where every BBR-family flow is past start-up, of their summed bandwidth estimates over the bottleneck rate.",
       source="TUM Sec. 4.3", checks=True),
    _m("probe_rtt_sync_s", "aggregate", S + "aggregate_probe_rtt_sync_s",
       "Time from the last BBR-family flow's start to the first sample at which all of them are in PROBE_RTT.",
       source="TUM Sec. 6.4", checks=True),
    _m("marked_packets", "aggregate", S + "aggregate_marked_packets",
       "Packets the bottleneck's AQM marked CE; null without an AQM.",
       checks=True),
    _m("mean_sojourn_ms", "aggregate", S + "aggregate_mean_sojourn_ms",
       "Mean of the per-packet queue sojourn time the AQM measures (recorded with an AQM only).",
       checks=True),
]

# Per flow, in summary.json's order.
FLOW = [
    _m("group", "flow", F + "flow_metrics",
       "Index of the `[[flows]]` entry the flow comes from."),
    _m("cc", "flow", F + "flow_metrics",
       "The flow's congestion-control algorithm (the engine's name)."),
    _m("start_s", "flow", F + "flow_metrics",
       "When the flow starts."),
    _m("stop_s", "flow", F + "flow_metrics",
       "When the flow stops (the run's end if it runs throughout)."),
    _m("rtt_ms", "flow", F + "flow_metrics",
       "The flow's configured base RTT."),
    _m("goodput_bps", "flow", M + "rate_bps",
       "Bytes delivered in order to the application x 8 over the flow's active time.",
       source="BBR-ACD Sec. 3.4", checks=True, summed=True, compare=2),
    _m("throughput_bps", "flow", M + "rate_bps",
       "Bytes reaching the receiver (duplicates included) x 8 over the flow's active time.",
       source="BBR-ACD Sec. 3.4", checks=True, summed=True, compare=3),
    _m("sent_packets", "flow", F + "flow_metrics",
       "Data segments sent, retransmissions included.",
       checks=True, summed=True),
    _m("retransmitted_packets", "flow", F + "flow_metrics",
       "Segments sent more than once.",
       source="TUM Sec. 3.4", checks=True, summed=True, compare=4),
    _m("retransmission_rate", "flow", M + "retransmission_rate",
       "Retransmitted over sent segments.",
       source="TUM Sec. 3.4", checks=True, compare=5),
    _m("mean_rtt_ms", "flow", F + "mean_dropna",
       "Mean over the sample intervals of the latest RTT sample.",
       source="TUM Sec. 3.4", checks=True, compare=6),
    _m("p95_rtt_ms", "flow", F + "percentiles",
       "95th percentile over the sample intervals of the latest RTT sample.",
       checks=True, compare=7),
    _m("mean_srtt_ms", "flow", F + "mean_dropna",
       "Mean of the sampled smoothed RTT (srtt).",
       checks=True, compare=8),
    _m("mean_cwnd_pkts", "flow", F + "mean_dropna",
       "Mean of the sampled cwnd.",
       source="BBR-CWS Sec. 5.3", checks=True, compare=9),
    _m("mean_min_rtt_estimate_ms", "flow", F + "mean_dropna",
       "Mean of the algorithm's sampled min_rtt estimate (BBR's RTprop).",
       source="BBR-CWS Sec. 3.2, TUM Sec. 5.2", checks=True, compare=10),
    _m("startup_exit_s", "flow", F + "startup_exit_s",
       "Time from a BBR-family flow's start to its first sample outside STARTUP.",
       source="BBR' Sec. 4.1", checks=True, compare=11),
    _m("probe_rtt_entries", "flow", F + "mode_entries",
       "Entries into PROBE_RTT seen in the samples (null for a flow without BBR's modes).",
       source="TUM Sec. 4.1", checks=True, compare=12),
    _m("mean_probe_rtt_duration_s", "flow", F + "mean_mode_duration_s",
       "Mean length of the flow's PROBE_RTT phases, consecutive samples x the sample interval.",
       source="TUM Sec. 4.3.1", checks=True),
    _m("mean_bw_estimate_bps", "flow", F + "mean_bw_estimate_bps",
       "Mean of the flow's bandwidth estimate (BtlBw) over its PROBE_BW samples.",
       source="BBR' Sec. 4.1", checks=True),
    _m("mean_probe_bw_cycle_s", "flow", F + "mean_probe_bw_cycle_s",
       "Mean time between the starts of successive probing phases (pacing gain > 1) within PROBE_BW.",
       source="BBR' Sec. 4.2", checks=True),
    _m("received_bytes", "flow", F + "flow_metrics",
       "Data bytes that reached the receiver, duplicates included.",
       checks=True, summed=True),
    _m("delivered_bytes", "flow", F + "flow_metrics",
       "Bytes delivered in order to the receiving application.",
       checks=True, summed=True),
    _m("rwnd_limited_s", "flow", F + "flow_metrics",
       "Seconds new data waited for the receiver's advertised window (tcpi_rwnd_limited).",
       checks=True, summed=True),
    _m("duplicate_packets", "flow", F + "flow_metrics",
       "Data segments the receiver got more than once.",
       checks=True, summed=True),
    _m("dropped_packets", "flow", F + "flow_metrics",
       "The flow's data segments dropped on the way.",
       checks=True, summed=True),
    _m("rto_count", "flow", F + "flow_metrics",
       "Retransmission timeouts.",
       checks=True, summed=True),
    _m("recoveries", "flow", F + "flow_metrics",
       "Fast recoveries entered.",
       checks=True, summed=True),
    _m("spurious_retransmissions", "flow", F + "flow_metrics",
       "Retransmissions the receiver reported as duplicates by D-SACK."),
    _m("undos", "flow", F + "flow_metrics",
       "Window reductions undone as spurious."),
    _m("reordering", "flow", F + "flow_metrics",
       "The sender's reordering degree at the end."),
    _m("reord_seen", "flow", F + "flow_metrics",
       "Reordering events the sender detected."),
    _m("tlp_probes", "flow", F + "flow_metrics",
       "Tail loss probes sent.",
       checks=True, summed=True),
    _m("in_flight_packets_at_end", "flow", F + "flow_metrics",
       "Segments in flight when the run ended."),
    _m("ce_packets", "flow", F + "flow_metrics",
       "Data segments that arrived CE-marked."),
    _m("ece_acks", "flow", F + "flow_metrics",
       "ACKs carrying ECE that the sender received."),
    _m("ecn_reductions", "flow", F + "flow_metrics",
       "Window reductions in response to ECE."),
    _m("size_bytes", "flow", F + "size_bytes",
       "A finite transfer's size (flows with `size`)."),
    _m("fct_s", "flow", F + "flow_metrics",
       "Flow completion time: start to the last byte delivered in order; null if unfinished."),
    _m("share", "flow", M + "share",
       "The flow's mean throughput over the sum of all flows' mean throughputs.",
       source="TUM Sec. 5.1", checks=True, compare=1),
]

BY_CC_ROWS = [
    _m("flows", "by_cc", S + "summarize",
       "Number of flows running the algorithm."),
    _m("share", "by_cc", S + "summarize",
       "The algorithm's flows' received bytes over all flows' received bytes.",
       source="TUM Sec. 5.1", checks=True, compare=1),
    _m("share_minus_fair_share", "by_cc", M + "share_vs_fair_share",
       "The algorithm's share minus its share of the flows (0 = fair).",
       source="TUM Sec. 5.1, Fig. 12", checks=True),
]

FCT = [
    _m("finite_flows", "fct", S + "fct_summary",
       "Flows with a finite `size`."),
    _m("completed", "fct", S + "fct_summary",
       "Finite flows that delivered their last byte."),
    _m("mean_s", "fct", S + "fct_summary",
       "Mean flow completion time of the completed flows."),
    _m("p50_s", "fct", S + "fct_summary",
       "Median completion time (numpy's linear interpolation)."),
    _m("p95_s", "fct", S + "fct_summary",
       "95th percentile of the completion times."),
    _m("p99_s", "fct", S + "fct_summary",
       "99th percentile of the completion times."),
]

LINK = [
    _m("flows", "link", S + "link_utilization",
       "Flows whose path crosses the link."),
    _m("utilization", "link", S + "link_utilization",
       "Goodput of the flows crossing the link over its rate x the run's duration."),
]

# An analysis window's aggregate block, in the order the [[checks]] errors list it.
WINDOW = [
    _m("jain_index", "window", S + "window_metrics",
       "Jain's index of the flows' mean throughputs over the window.",
       source="TUM Sec. 5.1", checks=True),
    _m("utilization", "window", S + "window_metrics",
       "Bits the samples in the window received over the capacity of the interval they crossed the bottleneck in.",
       source="BBR-ACW Eq. 3", checks=True),
    _m("total_goodput_bps", "window", S + "window_metrics",
       "Bits delivered in order in the window's samples over its length.",
       checks=True),
    _m("retransmitted_packets", "window", S + "window_metrics",
       "Retransmissions in the window's samples, summed over the flows.",
       source="TUM Sec. 3.4", checks=True),
    _m("mean_backlog_pkts", "window", S + "window_metrics",
       "Mean sampled backlog in the window.",
       checks=True),
    _m("p10_backlog_pkts", "window", S + "persistent_backlog_pkts",
       "10th percentile of the sampled backlog in the window.",
       source="TUM Sec. 4.4", checks=True),
    _m("mean_queueing_delay_ms", "window", M + "queueing_delay_ms",
       "Mean queueing delay (backlog bytes over the rate in force) in the window.",
       source="BBR-ACW Sec. 5.4", checks=True),
]

WINDOW_FLOW = [
    _m("cc", "window_flow", F + "window_flows",
       "The flow's algorithm."),
    _m("throughput_bps", "window_flow", F + "mean_skipna",
       "Mean of the flow's sampled throughput in the window while it runs.",
       checks=True),
    _m("goodput_bps", "window_flow", F + "mean_skipna",
       "Mean of the flow's sampled goodput in the window while it runs.",
       checks=True),
    _m("retransmitted_packets", "window_flow", F + "window_flows",
       "Retransmissions in the flow's samples in the window.",
       checks=True),
    _m("mean_rtt_ms", "window_flow", M + "rtt_stats",
       "Mean of the flow's latest-RTT samples in the window.",
       checks=True),
    _m("mean_srtt_ms", "window_flow", F + "mean_dropna",
       "Mean of the flow's smoothed RTT samples in the window.",
       checks=True),
    _m("mean_inflight_pkts", "window_flow", F + "mean_dropna",
       "Mean of the flow's sampled inflight in the window.",
       checks=True),
    _m("mean_cwnd_pkts", "window_flow", F + "mean_dropna",
       "Mean of the flow's sampled cwnd in the window.",
       checks=True),
    _m("mean_bw_estimate_bps", "window_flow", F + "mean_bw_estimate_bps",
       "Mean of the flow's bandwidth estimate over its PROBE_BW samples in the window.",
       checks=True),
    _m("share", "window_flow", M + "share",
       "The flow's mean throughput in the window over the sum of the flows' means.",
       checks=True),
]

WINDOW_BY_CC = [
    _m("flows", "window_by_cc", S + "window_metrics",
       "Number of flows running the algorithm."),
    _m("share", "window_by_cc", S + "window_metrics",
       "The algorithm's flows' summed mean throughput in the window over all flows'.",
       checks=True),
]

# A latency probe's statistics (specs/probes.py), named ``NAME[probe]`` after the probe's
# name; ``probe_`` and ``_rtt_`` in the names so they read apart from the flows' RTTs and
# from BBR's PROBE_RTT (``probe_rtt_*``). Over the whole run: probes have no window block.
P = "specs.probes."
PROBE = [
    _m("probe_sent_packets", "probe", P + "summary",
       "Probe requests sent (ping's transmitted).", key="count", checks=True),
    _m("probe_lost_packets", "probe", P + "summary",
       "Probes whose request or echo was dropped.", key="lost", checks=True),
    _m("probe_loss_rate", "probe", P + "summary",
       "Lost probes over probes sent; null when none was sent.",
       source="Flent RRUL (ping)", key="loss_rate", checks=True, compare=4),
    _m("probe_min_rtt_ms", "probe", P + "rtt_stats",
       "Shortest round trip of the probe's echoes.", key="min_ms", checks=True),
    _m("probe_median_rtt_ms", "probe", P + "rtt_stats",
       "Median round trip of the probe's echoes (numpy's linear percentile); null without an echo.",
       source="Flent RRUL (ping)", key="median_ms", checks=True, compare=1),
    _m("probe_p95_rtt_ms", "probe", P + "rtt_stats",
       "95th percentile of the echoes' round trips (linear).",
       key="p95_ms", checks=True, compare=2),
    _m("probe_p99_rtt_ms", "probe", P + "rtt_stats",
       "99th percentile of the echoes' round trips (linear).",
       key="p99_ms", checks=True, compare=3),
    _m("probe_max_rtt_ms", "probe", P + "rtt_stats",
       "Longest round trip of the probe's echoes.", key="max_ms", checks=True),
]
# fmt: on

TABLE: list[Metric] = (
    AGGREGATE + FLOW + BY_CC_ROWS + FCT + LINK + WINDOW + WINDOW_FLOW + WINDOW_BY_CC + PROBE
)
"""Every metric of summary.json, by scope."""


def names(scope: str, **where: Any) -> list[str]:
    """Names of the metrics of ``scope`` (in table order) whose fields equal ``where``."""
    return [
        x.name
        for x in TABLE
        if x.scope == scope and all(getattr(x, k) == v for k, v in where.items())
    ]


def _placed(scope: str, place: str) -> list[str]:
    rows = [x for x in TABLE if x.scope == scope and getattr(x, place) is not None]
    return [x.name for x in sorted(rows, key=lambda x: getattr(x, place))]


# The lists the rest of tcplab reads.
AGGREGATE_KEYS = names("aggregate")
"""summary.json's aggregate keys, in its order (analysis.summary writes exactly these)."""
WINDOW_AGGREGATE = names("window")
"""The aggregate keys of an analysis window's block (``window.`` metrics)."""
PER_FLOW = set(names("flow", checks=True))
"""Per-flow metrics a check may name (``NAME[flowN]``, ``NAME[cc]``)."""
SUMMED = set(names("flow", checks=True, summed=True))
"""Per-flow metrics that ``NAME[cc]`` adds up over the algorithm's flows (others: averaged)."""
WINDOW_PER_FLOW = set(names("window_flow", checks=True))
BY_CC = set(names("by_cc", checks=True))
PER_PROBE = {x.name: x.key or x.name for x in PROBE if x.checks}
"""Probe metrics a check may name (``NAME[probe]``), each with its key in ``probes[]``."""
COMPARE_AGGREGATE = _placed("aggregate", "compare")
COMPARE_FLOW = _placed("flow", "compare")
COMPARE_PROBE = _placed("probe", "compare")
SWEEP_DEFAULT = _placed("aggregate", "sweep")
PANEL = sorted(
    ((x.panel, x.name) for x in AGGREGATE if x.panel is not None), key=lambda p: p[0].line
)


def panel_lines(aggregate: dict[str, Any]) -> list[str]:
    """The run report's summary panel: one line per ``Panel.line``, the first metric's
    label in a 16-character column, the others' labels before their values; units as
    :func:`unit` gives them (none for fractions and indices)."""
    lines: dict[int, str] = {}
    for p, name in PANEL:
        scale, text = unit(name)
        try:
            x = float(aggregate.get(name)) / scale  # type: ignore[arg-type]
        except (TypeError, ValueError):
            x = float("nan")
        value = "n/a" if x != x else format(x, p.fmt)
        if text and text not in ("fraction", "index, 1 = fair") and x == x:
            value += f" {text}"
        if p.line in lines:
            lines[p.line] += f"   {p.label} {value}"
        else:
            lines[p.line] = f"{p.label:<15} {value}"
    return list(lines.values())


# ---------------------------------------------------------------------------- docs/METRICS.md

BEGIN = "<!-- metric-table: begin; generated by `python -m tcplab.metric_table docs/METRICS.md` from python/tcplab/metric_table.py, do not edit -->"
END = "<!-- metric-table: end -->"


def markdown() -> str:
    """The generated section of docs/METRICS.md: one table per scope."""
    out = [BEGIN, ""]
    for scope, title in SCOPES.items():
        rows = [x for x in TABLE if x.scope == scope]
        out += [f"### {title}", ""]
        out += [
            "| key | unit | definition | source | computed by | shown in |",
            "|---|---|---|---|---|---|",
        ]
        for x in rows:
            shown = ", ".join(x.shown) or "-"
            stored = f" (stored as `{x.key}`)" if x.key else ""
            out.append(
                f"| `{x.name}`{stored} | {x.unit or '-'} | {x.definition} | {x.source} | "
                f"`{x.compute}` | {shown} |"
            )
        out.append("")
    out.append(END)
    return "\n".join(out)


def with_table(doc: str) -> str:
    """``doc`` with its generated section replaced by :func:`markdown`."""
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    return doc[:start] + markdown() + doc[end:]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/METRICS.md")
    target.write_text(with_table(target.read_text()))
