"""Summary plots of a sweep: each metric against a swept parameter, the mean over seeds with
its 95 % confidence interval.

Model and choices (docs/ARCHITECTURE.md, "Reports"):

- Shares first: the first panel is each algorithm's share of the throughput (``share[cc]``
  of table.csv), one line per algorithm, whatever ``metrics`` lists (the question of most
  sweeps is how the algorithms split the link); then the sweep's ``metrics``.
- Interval: the mean of a point's n seeds with the Student-t 95 % confidence interval,
  ``t(0.975, n - 1) * s / sqrt(n)`` (s the sample standard deviation), not +-s: it says
  how well the seeds pin the mean down. One seed gives no interval (said in the title).
- Numeric axes: a parameter whose values are all numbers, or all sizes of one unit, rates
  or times (``"0.5bdp"``, ``"10Mbps"``, ``"40ms"``), is drawn on a numeric axis in that
  unit, with the unit in the label ("buffer (BDP)"); other values (algorithm names, lists)
  are categories in the order the sweep lists them. A numeric axis is logarithmic when
  its values are positive and spaced more evenly in ratio than in difference (0.25, 0.5,
  1, 2, 4 BDP: every step doubles), so a geometric grid is not squeezed into one corner.
- Legends: in the PNG a panel with more than LEGEND_LINES lines (three swept parameters
  make dozens) names their count instead of a legend that would cover it; report.html's
  legend names and toggles every line.
- Units: a metric's unit comes from its name (``_bps`` Mbit/s, ``_ms`` ms, ``_s`` s,
  ``_pkts`` packets); shares, utilisation, rates of retransmission and Jain's index are
  fractions. The label drops the name's unit suffix and names the unit drawn
  ("total_goodput (Mbit/s)", not "total_goodput_bps (Mbit/s)").

Deviations: none; the PNG (``summary_<axis>.png``) and the sweep's report.html draw the
same numbers (:func:`point_stats`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.ticker import NullFormatter

from tcplab.report import units
from tcplab.report.plots import new_figure
from tcplab.specs.units import parse_rate, parse_size, parse_time

CONFIDENCE = 0.95
# Lines per panel up to which the PNG has a legend (more would cover the panel).
LEGEND_LINES = 10
SHARES = "share per algorithm"
_SHARE = re.compile(r"^share\[(.+)\]$")


def key(v: Any) -> str:
    """A swept value as text (lists and tables as JSON, as in table.csv)."""
    return v if isinstance(v, str) else json.dumps(v)


@dataclass
class Axis:
    """How a swept parameter is drawn: ``numbers`` (one per value, in the sweep's order)
    when numeric, else None (categories); ``label`` with the unit."""

    name: str
    values: list[str]
    numbers: list[float] | None
    label: str
    log: bool = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.numbers is not None and geometric(self.numbers)


def geometric(numbers: list[float]) -> bool:
    """Whether positive ``numbers`` (at least three distinct) are spaced more evenly in
    ratio than in difference: the coefficient of variation of the steps between sorted
    values is smaller for their logarithms."""
    xs = sorted(set(numbers))
    if len(xs) < 3 or xs[0] <= 0:
        return False

    def spread(steps: list[float]) -> float:
        mean = sum(steps) / len(steps)
        return math.sqrt(sum((s - mean) ** 2 for s in steps) / len(steps)) / mean

    linear = [b - a for a, b in zip(xs, xs[1:])]
    ratio = [math.log(b / a) for a, b in zip(xs, xs[1:])]
    return spread(ratio) < spread(linear)


def axis_of(name: str, values: list[Any]) -> Axis:
    """The axis of parameter ``name`` swept over ``values`` (see the module's "Numeric
    axes")."""
    keys = [key(v) for v in values]
    short = name if "[" in name else name.split(".")[-1]
    if values and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        return Axis(name, keys, [float(v) for v in values], short)
    if values and all(isinstance(v, str) for v in values):
        sizes = _try(parse_size, values)
        if sizes is not None and len({s.unit for s in sizes}) == 1 and sizes[0].unit != "unlimited":
            unit = {"bdp": "BDP", "pkt": "packets", "bytes": "bytes"}[sizes[0].unit]
            return Axis(name, keys, [float(s.value) for s in sizes], f"{short} ({unit})")
        rates = _try(parse_rate, values)
        if rates is not None:
            return Axis(name, keys, [r / 1e6 for r in rates], f"{short} (Mbit/s)")
        times = _try(parse_time, values)
        if times is not None:
            return Axis(name, keys, [t / 1e6 for t in times], f"{short} (ms)")
    return Axis(name, keys, None, short)


def _try(parse: Any, values: list[str]) -> list[Any] | None:
    try:
        return [parse(v) for v in values]
    except (ValueError, TypeError, ArithmeticError):
        return None


_UNIT_SUFFIX = re.compile(r"_(bps|us|ns|ms|s|pkts|packets)(?=$|\[)")


def metric_label(metric: str) -> str:
    """``total_goodput_bps`` -> ``total_goodput (Mbit/s)``: the unit drawn, not the unit
    of the stored name (a ``_bps`` label over Mbit/s ticks reads as a 10^6 error)."""
    scale, unit = units.unit(metric)
    return f"{_UNIT_SUFFIX.sub('', metric, count=1)} ({unit})" if unit else metric


def ci_half_width(values: Any, confidence: float = CONFIDENCE) -> float:
    """Half-width of the Student-t confidence interval of the mean of ``values`` (NaN
    ignored); NaN for fewer than two values."""
    x = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=float)
    if len(x) < 2:
        return math.nan
    # why: start-up time; scipy.stats takes ~1.5 s to import, and a single run's report
    # (which imports this module through report/html.py) draws no interval
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def values_label(df: pd.DataFrame, names: list[str], none: str) -> Any:
    """Per row, its values of the parameters ``names`` as "a=1, b=2" (``none`` when there
    are no such parameters): a line's name in point_stats, a point's in the
    throughput-delay plot."""
    if not names:
        return none
    return df[names].apply(lambda r: ", ".join(f"{o}={key(v)}" for o, v in r.items()), axis=1)


def point_stats(table: pd.DataFrame, axis: Axis, metric: str, others: list[str]) -> pd.DataFrame:
    """Per combination of the other parameters (column ``line``, "" without any) and value
    of ``axis`` (``x``: the number, or the value's position for categories): ``mean``,
    ``ci`` (95 % half-width), ``n`` (seeds with a value), in the sweep's value order."""
    cols = ["line", "value", "x", "mean", "ci", "n"]
    if table.empty or metric not in table.columns or axis.name not in table.columns:
        return pd.DataFrame(columns=cols)
    df = table.copy()
    df["_value"] = df[axis.name].map(key)
    df["_line"] = values_label(df, others, "")
    rows = []
    xs = axis.numbers or list(range(len(axis.values)))
    for line_name in dict.fromkeys(df["_line"]):
        sel = df[df["_line"] == line_name]
        for value, x in zip(axis.values, xs):
            vals = pd.to_numeric(sel.loc[sel["_value"] == value, metric], errors="coerce").dropna()
            rows.append(
                {
                    "line": line_name,
                    "value": value,
                    "x": float(x),
                    "mean": float(vals.mean()) if len(vals) else math.nan,
                    "ci": ci_half_width(vals),
                    "n": int(len(vals)),
                }
            )
    return pd.DataFrame(rows, columns=cols)


def share_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if _SHARE.match(str(c))]


def panels(plan: Any, table: pd.DataFrame) -> list[str]:
    """What the summary shows: SHARES first (if the table has shares), then the sweep's
    metrics that are columns of the table and not a share already shown."""
    shares = share_columns(table) if not table.empty else []
    metrics = [m for m in plan.metrics if not table.empty and m in table.columns]
    return ([SHARES] if shares else []) + [m for m in metrics if not (shares and m in shares)]


def series_of(
    plan: Any, table: pd.DataFrame, axis: Axis, panel: str
) -> list[tuple[str, pd.DataFrame]]:
    """The lines of a panel: (label, point_stats) per algorithm for SHARES, else per
    combination of the other parameters."""
    others = [a for a in plan.axes if a != axis.name]
    if panel == SHARES:
        out = []
        for col in share_columns(table):
            cc = _SHARE.match(col).group(1)  # type: ignore[union-attr]
            for line_name, g in point_stats(table, axis, col, others).groupby("line", sort=False):
                out.append((cc + (f" ({line_name})" if line_name else ""), _ordered(g, axis)))
        return out
    return [
        (line_name, _ordered(g, axis))
        for line_name, g in point_stats(table, axis, panel, others).groupby("line", sort=False)
    ]


def _ordered(g: pd.DataFrame, axis: Axis) -> pd.DataFrame:
    """Points along a numeric axis in increasing x (lines must not zigzag back)."""
    return g.sort_values("x", kind="stable") if axis.numbers is not None else g


def plot_axis(out: Path, plan: Any, table: pd.DataFrame, axis_name: str) -> Path:
    """Write ``summary_<axis>.png``: one panel per entry of :func:`panels`, x the values of
    ``axis_name``, y the mean over seeds with 95 % confidence intervals."""
    axis = axis_of(axis_name, plan.axes[axis_name])
    shown = panels(plan, table)
    n = max(1, len(shown))
    ncols = min(3, n)
    nrows = (n + ncols - 1) // ncols
    # Constrained layout: places titles and tick labels like tight_layout.
    fig = new_figure(figsize=(4.8 * ncols, 3.8 * nrows), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False)
    flat = list(grid.flat)
    for ax in flat[n:]:
        ax.axis("off")
    seeds = int(plan.repeat)
    for ax, panel in zip(flat, shown):
        metric = "share" if panel == SHARES else panel
        scale, _ = units.unit(metric)
        for label, g in series_of(plan, table, axis, panel):
            ax.errorbar(
                g["x"],
                g["mean"] / scale,
                yerr=(g["ci"] / scale).fillna(0).to_numpy(),
                marker="o",
                capsize=3,
                lw=1.2,
                label=label or None,
            )
        if axis.numbers is None:
            ax.set_xticks(range(len(axis.values)))
            ax.set_xticklabels(
                axis.values,
                rotation=30 if max(len(v) for v in axis.values) > 6 else 0,
                fontsize=8,
            )
        if axis.log:
            ax.set_xscale("log")
            ax.set_xticks(axis.numbers, labels=[f"{v:g}" for v in axis.numbers], fontsize=8)
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(axis.label)
        ax.set_ylabel(metric_label(metric), fontsize=9)
        ax.set_title(panel if panel == SHARES else metric, fontsize=10, loc="left")
        if panel == SHARES:
            ax.set_ylim(-0.02, 1.02)
        ax.grid(True, lw=0.3)
        n_lines = len(ax.get_legend_handles_labels()[0])
        if 0 < n_lines <= LEGEND_LINES:
            ax.legend(fontsize=7)
        elif n_lines:  # a legend taller than the panel would hide it; the HTML has one
            ax.text(
                0.01,
                0.99,
                f"{n_lines} lines: see report.html's legend",
                transform=ax.transAxes,
                va="top",
                fontsize=7,
                color="0.4",
            )
    if not shown:
        flat[0].text(0.5, 0.5, "no finished runs", ha="center", va="center")
    fig.suptitle(caption(seeds, axis_name), fontsize=10)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in axis_name)
    path = Path(out) / f"summary_{safe}.png"
    fig.savefig(path, dpi=90, metadata={"Software": None})
    return path


def caption(seeds: int, axis_name: str) -> str:
    interval = (
        "error bars: 95 % confidence interval of the mean (Student t)"
        if seeds > 1
        else "one seed per point: no confidence interval"
    )
    return f"against {axis_name}: mean over {seeds} seed(s) per point; {interval}"


# The throughput-delay plot of a sweep (throughput_delay.png), the field's standard view
# of a set of runs (Pantheon, Yan et al., USENIX ATC 2018, Fig. 2).
DELAY_METRIC = "mean_queueing_delay_ms"
THROUGHPUT_METRIC = "total_goodput_bps"
TPUT_DELAY_FILE = "throughput_delay.png"


def throughput_delay_points(plan: Any, table: pd.DataFrame) -> pd.DataFrame:
    """Per swept point (every combination of swept values): the mean over its seeds of
    the bottleneck's queueing delay (ms) and the total goodput (bit/s), each with its 95 %
    confidence half-width (Student t, as the other summary plots), and ``n`` seeds."""
    cols = ["point", "delay", "delay_ci", "goodput", "goodput_ci", "n"]
    names = [a for a in plan.axes if a in table.columns]
    if table.empty or not {DELAY_METRIC, THROUGHPUT_METRIC} <= set(table.columns):
        return pd.DataFrame(columns=cols)
    df = table.copy()
    df["_point"] = values_label(df, names, "all runs")
    rows = []
    for point, g in df.groupby("_point", sort=False):
        d = pd.to_numeric(g[DELAY_METRIC], errors="coerce").dropna()
        t = pd.to_numeric(g[THROUGHPUT_METRIC], errors="coerce").dropna()
        if len(d) == 0 or len(t) == 0:
            continue
        rows.append(
            {
                "point": point,
                "delay": float(d.mean()),
                "delay_ci": ci_half_width(d),
                "goodput": float(t.mean()),
                "goodput_ci": ci_half_width(t),
                "n": int(min(len(d), len(t))),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def plot_throughput_delay(out: Path, plan: Any, table: pd.DataFrame) -> Path:
    """Write throughput_delay.png: one point per swept point, total goodput against the
    bottleneck's mean queueing delay (delay axis reversed: better lies up and right),
    95 % confidence intervals both ways (none for one seed)."""
    pts = throughput_delay_points(plan, table)
    fig = new_figure(figsize=(7.5, 5.0), layout="constrained")
    ax = fig.subplots()
    scale, _ = units.unit(THROUGHPUT_METRIC)
    for i, r in enumerate(pts.itertuples(index=False)):
        ax.errorbar(
            r.delay,
            r.goodput / scale,
            xerr=0 if r.delay_ci != r.delay_ci else r.delay_ci,
            yerr=0 if r.goodput_ci != r.goodput_ci else r.goodput_ci / scale,
            marker="o",
            capsize=3,
            color=f"C{i % 10}",
            label=r.point if len(pts) <= LEGEND_LINES else None,
        )
    if pts.empty:
        ax.text(0.5, 0.5, "no finished runs with a queueing delay", ha="center", va="center")
    else:
        ax.invert_xaxis()
        top = float((pts["goodput"] + pts["goodput_ci"].fillna(0)).max()) / scale
        ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    if 0 < len(pts) <= LEGEND_LINES:
        ax.legend(fontsize=7, loc="lower left")
    ax.set_xlabel("mean queueing delay at the bottleneck [ms] (better ->)")
    ax.set_ylabel(metric_label(THROUGHPUT_METRIC), fontsize=9)
    ax.grid(True, lw=0.3)
    seeds = int(plan.repeat)
    ci = "95 % confidence intervals of the mean" if seeds > 1 else "one seed: no interval"
    fig.suptitle(
        f"throughput against delay per swept point (mean over {seeds} seed(s); {ci})",
        fontsize=9,
    )
    path = Path(out) / TPUT_DELAY_FILE
    fig.savefig(path, dpi=90, metadata={"Software": None})
    return path
