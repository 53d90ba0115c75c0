"""Pass/fail checks on a run's metrics (``[[checks]]`` in a spec), and the metric
expressions they and the catalogue use.

A check compares one metric of summary.json with a number, or with a multiple of another
metric::

    [[checks]]
    name = "BBR takes most of the link"
    metric = "share[bbr]"                 # an expression (below)
    op = ">="                             # >=  <=  >  <  within
    value = 0.8

    [[checks]]
    metric = "jain_index"
    op = "within"                         # |ours - value| <= tolerance
    value = 0.92
    tolerance = 0.05

    [[checks]]
    metric = "retransmitted_packets[bbr-acd]"
    op = "<="
    value = 0.5
    of = "retransmitted_packets[bbr]"     # ours <= 0.5 x retransmitted_packets[bbr]

Metric expressions:

- an aggregate key of summary.json: ``jain_index``, ``utilization``, ``t_f95_s``, ...
- ``NAME[cc]``: the flows running algorithm ``cc`` together: ``share`` and
  ``share_minus_fair_share`` (their group's share, ``by_cc``); counts and rates
  (``goodput_bps``, ``throughput_bps``, ``sent_packets``, ``retransmitted_packets``,
  ``received_bytes``, ``delivered_bytes``) summed; ``retransmission_rate`` as the group's
  retransmitted over sent; other per-flow metrics (``mean_rtt_ms``, ``p95_rtt_ms``)
  averaged over the group's flows.
- ``NAME[flowN]``: one flow's per-flow metric (flows numbered from 0 as expanded).
- ``window.`` before any of these: the same over the spec's analysis window
  (``[experiment] analysis = ["10s", "60s"]``): ``window.jain_index``,
  ``window.share[bbr]``, ``window.throughput_bps[flow1]``, ``window.retransmitted_packets``.
- ``windows.NAME.`` before any of these: the same over the named window NAME
  (``[experiment] windows = { drain = ["40s", "45s"] }``): ``windows.drain.mean_backlog_pkts``;
  with ``of`` one window compares with another
  (``of = "windows.before.mean_inflight_pkts[flow0]"``).

``tcplab run`` prints each check's result and exits 1 when one fails (the way
transperf's pass/fail checks gate a run).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr

from .units import real_number

Number = Annotated[float, BeforeValidator(real_number)]

OPS = (">=", "<=", ">", "<", "within")
SUMMED = {
    "goodput_bps",
    "throughput_bps",
    "sent_packets",
    "retransmitted_packets",
    "received_bytes",
    "delivered_bytes",
    "duplicate_packets",
    "dropped_packets",
    "rto_count",
    "recoveries",
    "tlp_probes",
}
PER_FLOW = SUMMED | {
    "retransmission_rate",
    "mean_rtt_ms",
    "p95_rtt_ms",
    "mean_srtt_ms",
    "share",
    "mean_cwnd_pkts",
    "mean_min_rtt_estimate_ms",
    "startup_exit_s",
    "probe_rtt_entries",
    "mean_bw_estimate_bps",
    "mean_probe_rtt_duration_s",
    "mean_probe_bw_cycle_s",
}
WINDOW_AGGREGATE = [
    "jain_index",
    "utilization",
    "total_goodput_bps",
    "retransmitted_packets",
    "mean_backlog_pkts",
    "p10_backlog_pkts",
    "mean_queueing_delay_ms",
]
"""The aggregate keys of the analysis-window block (``window.`` metrics)."""
WINDOW_PER_FLOW = {
    "throughput_bps",
    "goodput_bps",
    "retransmitted_packets",
    "mean_rtt_ms",
    "mean_srtt_ms",
    "share",
    "mean_inflight_pkts",
    "mean_cwnd_pkts",
    "mean_bw_estimate_bps",
}
BY_CC = {"share", "share_minus_fair_share"}
_WINDOWS = re.compile(r"^windows\.(?P<window>[a-z][a-z0-9_]*)\.(?P<inner>.*)$")
_EXPR = re.compile(
    r"^(?:window\.|windows\.[a-z][a-z0-9_]*\.)?(?P<name>[a-z_0-9]+)(\[(?P<sel>[A-Za-z0-9_.+-]+)\])?$"
)


class Check(BaseModel):
    """One ``[[checks]]`` entry (the catalogue's claims add where it comes from)."""

    model_config = ConfigDict(extra="forbid")

    name: StrictStr = ""
    metric: StrictStr
    op: Literal[">=", "<=", ">", "<", "within"]
    value: Number = Field(allow_inf_nan=False)
    tolerance: Number = Field(0.0, ge=0.0, allow_inf_nan=False)
    of: StrictStr | None = None

    def label(self) -> str:
        """A readable statement of the check: ``share[bbr] >= 0.8``."""
        target = f"{self.value:g} x {self.of}" if self.of else f"{self.value:g}"
        if self.op == "within":
            return self.name or f"{self.metric} within {self.tolerance:g} of {target}"
        return self.name or f"{self.metric} {self.op} {target}"


def check_expression(
    expr: str,
    ccs: set[str],
    n_flows: int,
    aggregate_keys: list[str],
    window: bool = False,
    windows: set[str] = frozenset(),
) -> str | None:
    """Why ``expr`` names no metric of a run with these algorithms and flows, or None.
    ``window``: the spec has an analysis window, so ``window.`` metrics exist;
    ``windows``: the names of its named windows (``windows.NAME.`` metrics)."""
    if expr.startswith("window."):
        if not window:
            return f'{expr}: window metrics need [experiment] analysis = ["from", "to"]'
        return _window_expression(expr[len("window.") :], ccs, n_flows)
    if expr.startswith("windows."):
        w = _WINDOWS.match(expr)
        if not w or w.group("window") not in windows:
            known = ", ".join(sorted(windows)) or "none"
            return f"{expr}: names no window of [experiment] windows (defined: {known})"
        return _window_expression(w.group("inner"), ccs, n_flows)
    m = _EXPR.match(expr)
    if not m:
        return f"cannot parse metric {expr!r}; write e.g. 'jain_index', 'share[bbr]' or 'goodput_bps[flow0]'"
    name, sel = m.group("name"), m.group("sel")
    if sel is None:
        if name not in aggregate_keys:
            return f"unknown aggregate metric '{name}'; known: {', '.join(aggregate_keys)}"
        return None
    fm = re.fullmatch(r"flow(\d+)", sel)
    if fm:
        if int(fm.group(1)) >= n_flows:
            return f"{expr}: the spec has {n_flows} flows (flow0 to flow{n_flows - 1})"
        if name not in PER_FLOW:
            return f"unknown per-flow metric '{name}'; known: {', '.join(sorted(PER_FLOW))}"
        return None
    if sel not in ccs:
        return f"{expr}: no flow runs '{sel}'; the spec's algorithms: {', '.join(sorted(ccs))}"
    if name not in PER_FLOW | BY_CC:
        return (
            f"unknown per-algorithm metric '{name}'; known: {', '.join(sorted(PER_FLOW | BY_CC))}"
        )
    return None


def _window_expression(inner: str, ccs: set[str], n_flows: int) -> str | None:
    why = check_expression(inner, ccs, n_flows, WINDOW_AGGREGATE)
    m = _EXPR.match(inner)
    if why is None and m and m.group("sel") and m.group("name") not in WINDOW_PER_FLOW | BY_CC:
        why = f"unknown window metric '{m.group('name')}'; known: {', '.join(sorted(WINDOW_PER_FLOW))}"
    return why


def metric_value(summary: dict[str, Any], expr: str) -> float:
    """The value of a metric expression in a summary.json document (NaN if undefined).
    ``window.`` in front reads the analysis-window block (``[experiment] analysis``)."""
    if expr.startswith("window."):
        return metric_value(summary.get("window") or {}, expr[len("window.") :])
    w = _WINDOWS.match(expr)
    if w:
        return metric_value(
            (summary.get("windows") or {}).get(w.group("window")) or {}, w.group("inner")
        )
    m = _EXPR.match(expr)
    if not m:
        raise ValueError(f"cannot parse metric {expr!r}")
    name, sel = m.group("name"), m.group("sel")
    if sel is None:
        return _num(summary.get("aggregate", {}).get(name))
    flows = summary.get("flows", [])
    fm = re.fullmatch(r"flow(\d+)", sel)
    if fm:
        k = int(fm.group(1))
        return _num(flows[k].get(name)) if k < len(flows) else math.nan
    if name in BY_CC:
        return _num(summary.get("by_cc", {}).get(sel, {}).get(name))
    group = [f for f in flows if f.get("cc") == sel]
    if not group:
        return math.nan
    if name in SUMMED:
        return float(sum(_num(f.get(name)) for f in group))
    if name == "retransmission_rate":
        sent = sum(_num(f.get("sent_packets")) for f in group)
        return (
            sum(_num(f.get("retransmitted_packets")) for f in group) / sent
            if sent > 0
            else math.nan
        )
    vals = [_num(f.get(name)) for f in group]
    vals = [v for v in vals if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else math.nan


@dataclass
class Outcome:
    """A check evaluated: ours, the target it was compared with, and whether it held."""

    check: Check
    ours: float
    target: float
    passed: bool

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        return f"{mark}  {self.check.label()}: ours {self.ours:.4g}" + (
            f" (target {self.target:.4g})" if self.check.of or self.check.op == "within" else ""
        )


def compare(op: str, ours: float, target: float, tolerance: float = 0.0) -> bool:
    """``ours op target``; NaN never passes."""
    if math.isnan(ours) or math.isnan(target):
        return False
    if op == "within":
        return abs(ours - target) <= tolerance
    return {">=": ours >= target, "<=": ours <= target, ">": ours > target, "<": ours < target}[op]


def evaluate(check: Check, summary: dict[str, Any]) -> Outcome:
    """Evaluate one check against a summary.json document."""
    ours = metric_value(summary, check.metric)
    target = check.value * (metric_value(summary, check.of) if check.of else 1.0)
    return Outcome(check, ours, target, compare(check.op, ours, target, check.tolerance))
