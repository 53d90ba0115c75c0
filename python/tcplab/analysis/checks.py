"""Evaluating ``[[checks]]`` and metric expressions on a run's summary.json (the
expressions' grammar and the checks' model: :mod:`tcplab.specs.checks`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from tcplab.metric_table import BY_CC, PER_PROBE, SUMMED
from tcplab.specs.checks import METRIC_EXPR, WINDOWS_EXPR, Check


def metric_value(summary: dict[str, Any], expr: str) -> float:
    """The value of a metric expression in a summary.json document (NaN if undefined).
    ``window.`` in front reads the analysis-window block (``[experiment] analysis``)."""
    if expr.startswith("window."):
        return metric_value(summary.get("window") or {}, expr[len("window.") :])
    w = WINDOWS_EXPR.match(expr)
    if w:
        return metric_value(
            (summary.get("windows") or {}).get(w.group("window")) or {}, w.group("inner")
        )
    m = METRIC_EXPR.match(expr)
    if not m:
        raise ValueError(f"cannot parse metric {expr!r}")
    name, sel = m.group("name"), m.group("sel")
    if name in PER_PROBE:
        return probe_value(summary, name, sel)
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


def probe_value(summary: dict[str, Any], name: str, probe: str | None) -> float:
    """Probe metric ``name`` (metric_table.PER_PROBE) of the probe named ``probe`` in
    summary.json's ``probes`` list; NaN when the run has no such probe."""
    for entry in summary.get("probes") or []:
        if entry.get("name") == probe:
            return _num(entry.get(PER_PROBE[name]))
    return math.nan


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


def compare(
    op: str, ours: float, target: float, tolerance: float = 0.0, ref: float | None = None
) -> bool:
    """``ours op target``; NaN never passes.

    ``within`` without a reference metric: ``|ours - target| <= tolerance`` in the
    metric's unit. With one (a check's ``of``, whose value is ``ref``; ``target`` is then
    ``value x ref``) the tolerance is on the ratio: ``|ours / ref - value| <= tolerance``,
    i.e. ``|ours - target| <= tolerance x |ref|``; undefined when ``ref`` is 0.
    """
    if math.isnan(ours) or math.isnan(target):
        return False
    if op == "within":
        if ref is None:
            return abs(ours - target) <= tolerance
        if math.isnan(ref) or ref == 0:
            return False
        return abs(ours - target) <= tolerance * abs(ref)
    return {">=": ours >= target, "<=": ours <= target, ">": ours > target, "<": ours < target}[op]


def evaluate(check: Check, summary: dict[str, Any]) -> Outcome:
    """Evaluate one check against a summary.json document."""
    ours = metric_value(summary, check.metric)
    ref = metric_value(summary, check.of) if check.of else None
    target = check.value * (ref if ref is not None else 1.0)
    return Outcome(check, ours, target, compare(check.op, ours, target, check.tolerance, ref))
