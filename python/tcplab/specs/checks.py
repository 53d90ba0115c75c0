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
- ``NAME[probe]``: a latency probe's statistic (``[[probes]]``, named by its ``name`` or
  ``probeI``): ``probe_median_rtt_ms[ping]``, ``probe_p95_rtt_ms[ping]``,
  ``probe_loss_rate[ping]``, ... (the ``probe`` rows of tcplab/metric_table.py); over
  the whole run only (no ``window.`` form).
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

import re
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr

from tcplab.metric_table import (  # the names a check may use: the one table of metrics
    AGGREGATE_KEYS as AGGREGATE_KEYS,  # re-exported: specs/model.py reads it from here
)
from tcplab.metric_table import BY_CC, PER_FLOW, PER_PROBE, WINDOW_AGGREGATE, WINDOW_PER_FLOW
from tcplab.specs.units import real_number

Number = Annotated[float, BeforeValidator(real_number)]

OPS = (">=", "<=", ">", "<", "within")

WINDOWS_EXPR = re.compile(r"^windows\.(?P<window>[a-z][a-z0-9_]*)\.(?P<inner>.*)$")
METRIC_EXPR = re.compile(
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
    probes: Sequence[str] = (),
) -> str | None:
    """Why ``expr`` names no metric of a run with these algorithms and flows, or None.
    ``window``: the spec has an analysis window, so ``window.`` metrics exist;
    ``windows``: the names of its named windows (``windows.NAME.`` metrics);
    ``probes``: its probes' names (``NAME[probe]`` metrics)."""
    if expr.startswith("window."):
        if not window:
            return f'{expr}: window metrics need [experiment] analysis = ["from", "to"]'
        return _window_expression(expr[len("window.") :], ccs, n_flows)
    if expr.startswith("windows."):
        w = WINDOWS_EXPR.match(expr)
        if not w or w.group("window") not in windows:
            known = ", ".join(sorted(windows)) or "none"
            return f"{expr}: names no window of [experiment] windows (defined: {known})"
        return _window_expression(w.group("inner"), ccs, n_flows)
    m = METRIC_EXPR.match(expr)
    if not m:
        return f"cannot parse metric {expr!r}; write e.g. 'jain_index', 'share[bbr]' or 'goodput_bps[flow0]'"
    name, sel = m.group("name"), m.group("sel")
    if name in PER_PROBE:
        return _probe_expression(expr, name, sel, probes)
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
    if sel not in ccs and sel in probes:
        return _probe_expression(expr, name, sel, probes)
    if sel not in ccs:
        return f"{expr}: no flow runs '{sel}'; the spec's algorithms: {', '.join(sorted(ccs))}"
    if name not in PER_FLOW | BY_CC:
        return (
            f"unknown per-algorithm metric '{name}'; known: {', '.join(sorted(PER_FLOW | BY_CC))}"
        )
    return None


def _probe_expression(expr: str, name: str, sel: str | None, probes: Sequence[str]) -> str | None:
    """Why ``expr``, a probe metric or a metric of a probe, names no probe statistic."""
    known = ", ".join(probes) or "none; add [[probes]]"
    if name not in PER_PROBE:
        return f"unknown probe metric '{name}'; known: {', '.join(PER_PROBE)}"
    if sel is None:
        return f"{expr}: a probe metric names its probe: {name}[NAME] (the spec's probes: {known})"
    if sel not in probes:
        return f"{expr}: no probe is named '{sel}' (the spec's probes: {known})"
    return None


def _window_expression(inner: str, ccs: set[str], n_flows: int) -> str | None:
    m = METRIC_EXPR.match(inner)
    if m and m.group("name") in PER_PROBE:
        return f"{m.group('name')}: probe metrics are over the whole run, not in a window"
    why = check_expression(inner, ccs, n_flows, WINDOW_AGGREGATE)
    if why is None and m and m.group("sel") and m.group("name") not in WINDOW_PER_FLOW | BY_CC:
        why = f"unknown window metric '{m.group('name')}'; known: {', '.join(sorted(WINDOW_PER_FLOW))}"
    return why
