"""HTML reports: one self-contained page per run (report.html in the run directory) and per
sweep (report.html in the sweep directory), and the Jinja2 environment every tcplab HTML
page is rendered with (the catalogue's, reproduce/report.py, too).

Model: a page is a Jinja2 template (report/templates/*.html.j2, autoescaped, undefined
names are errors) filled with plain data; interactive plots are drawn in the browser by
plotly.js, embedded whole in the page (about 4.8 MB) so the file works offline and moved
anywhere. The figures are built here as plotly's JSON (traces and layout as dicts) rather
than through plotly's Python figure classes, whose validation costs more time than
drawing the PNG report.

Choices (docs/ARCHITECTURE.md, "Reports"):

- Run page: the time series on one x axis (zooming one zooms all; a flow's legend entry
  hides it in every panel), the same quantities and smoothing as report.png (series.py),
  each series decimated to HTML_BUCKETS min/max buckets (series.parquet has every sample);
  the CDFs; the summary's aggregate, per-algorithm and per-flow tables; the spec.
- Sweep page: per swept parameter, each panel of the summary plots with its 95 %
  confidence intervals (sweep_plots.point_stats); the table of means; sweep.json's grid.
- When plotly.js has drawn every figure, the page sets ``data-plotted`` on <body> to the
  number of figures (what the browser test reads).
"""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import orjson
import pandas as pd

from tcplab.analysis import metrics as m
from tcplab.report import plots as p
from tcplab.report import probes as probe_report
from tcplab.report import series as sr
from tcplab.report import sweep_plots as sp
from tcplab.report.units import unit
from tcplab.storage.directory import spec_toml
from tcplab.storage.files import tmp_prefix

# Min/max buckets per series in the HTML: finer than the PNG (zooming in shows more), a
# bound on the file size for long runs with many flows.
HTML_BUCKETS = 2000
MBIT = 1e6
DASHES = ["solid", "dash", "dot", "dashdot"]


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja2 environment of tcplab's HTML: templates of tcplab.report and of
    tcplab.reproduce, autoescaping on (text is text, never markup), undefined names fail.
    The template folders are found by path, not with PackageLoader: that imported the
    tcplab.reproduce package, and with it scipy.stats, 0.6 CPU s of every `tcplab run`
    report."""
    package = Path(__file__).resolve().parents[1]
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(
            [package / "report" / "templates", package / "reproduce" / "templates"]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@functools.lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js, minified, from the plotly package (embedded in every page)."""
    # why: start-up time; plotly is heavy and read once per process (lru_cache)
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _hex(color: Any) -> str:
    # why: start-up time; matplotlib only where a colour is converted
    from matplotlib.colors import to_hex

    return to_hex(color)


def _values(y: Any, decimals: int = 4) -> list[float | None]:
    """Numbers for JSON: rounded to ``decimals`` places (values are in display units: s,
    Mbit/s, ms, packets), NaN and infinities as null (a gap)."""
    a = np.round(np.asarray(y, dtype=float), decimals)
    finite = np.isfinite(a)
    if finite.all():  # most traces: no per-value test in Python
        return a.tolist()
    return [v if ok else None for v, ok in zip(a.tolist(), finite.tolist())]


def _trace(x: Any, y: Any, **kw: Any) -> dict[str, Any]:
    xd, yd = sr.decimate(x, y, HTML_BUCKETS)
    return {
        # SVG, not WebGL (scattergl): drawn also where a browser has no GPU.
        "type": "scatter",
        "x": _values(xd),
        "y": _values(yd),
        "mode": "lines",
        **kw,
    }


def _time_panels(result: Any) -> list[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    """(title, traces, y axis settings) of each time-series panel of the run page, in
    the order of :data:`tcplab.report.series.TIME_PANELS` (report.png's panels)."""
    run = result.run
    styles = p.flow_styles(run)
    algo_colors = {cc: _hex(c) for cc, c in p.algorithm_colors(run).items()}
    labels = {int(f): p.flow_label(run, f) for f in run.flows.index}
    t_rate = np.array([0.0] + [e[0] for e in run.bottleneck_events()] + [run.duration_s])
    rate_trace = {
        "type": "scatter",
        "x": _values(t_rate),
        "y": _values(p.link_rate_at(run, t_rate + run.interval_s / 2) / MBIT),
        "mode": "lines",
        "line": {"shape": "hv", "color": "#999999", "width": 1},
        "name": "bottleneck rate",
        "legendgroup": "rate",
    }

    def flows(wide: pd.DataFrame, scale: float, shape: str = "linear") -> list[dict[str, Any]]:
        out = []
        t = wide.index.to_numpy(dtype=float)
        for fid in run.flows.index:
            if fid not in wide.columns:
                continue
            st = styles[int(fid)]
            y = pd.to_numeric(wide[fid], errors="coerce").to_numpy(dtype=float) / scale
            out.append(
                _trace(
                    t,
                    y,
                    name=labels[int(fid)],
                    legendgroup=f"flow{int(fid)}",
                    line={
                        "color": _hex(st["color"]),
                        "dash": DASHES[p.LINE_STYLES.index(st["ls"])],
                        "width": 1,
                        "shape": shape,
                    },
                )
            )
        return out

    def totals(wide: pd.DataFrame, scale: float, what: str) -> list[dict[str, Any]]:
        tot = sr.per_algorithm_total(wide, sr.algorithm_of(run))
        t = tot.index.to_numpy(dtype=float)
        return [
            _trace(
                t,
                tot[cc].to_numpy() / scale,
                name=f"{cc} {what}",
                legendgroup=f"cc:{cc}",
                line={"color": algo_colors.get(cc, "#000000"), "width": 2.5},
            )
            for cc in tot.columns
        ]

    def per_flow_modes(col: str) -> list[dict[str, Any]]:
        out = []
        for fid in run.flows.index:
            sel = sr.active_rows(run, fid)
            st = styles[int(fid)]
            # A step line needs only the samples where the mode changes (and the last).
            y = sel[col].astype("string").fillna("").to_numpy(dtype=object)
            keep = np.ones(len(y), dtype=bool)
            keep[1:-1] = y[1:-1] != y[:-2]
            out.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": _values(sel["time_s"].to_numpy(dtype=float)[keep]),
                    "y": [v or None for v in y[keep]],
                    "name": labels[int(fid)],
                    "legendgroup": f"flow{int(fid)}",
                    "line": {"color": _hex(st["color"]), "width": 1, "shape": "hv"},
                }
            )
        return out

    def estimate(needles: tuple[str, ...], what: str) -> tuple[str, list[dict[str, Any]]]:
        col = p.find_cc_column(run, *needles)
        if col is None:
            return f"(no algorithm reports {what})", []
        scale, text = unit(col)
        return f"{p.short_name(col)} [{text}]", flows(run.wide(col), scale)

    thr = run.wide("throughput_bps")
    window = sr.smoothing_samples(run, result.summary.get("mean_rtt_ms"))
    good = sr.trailing_mean(run.wide("goodput_bps"), window)
    rtt_col = "rtt_ms" if run.series["rtt_ms"].notna().any() else "srtt_ms"
    q = run.queue
    qt = q["time_s"].to_numpy(dtype=float) if not q.empty else np.zeros(0)
    built: dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]] = {}
    built["throughput_algorithm"] = (
        "[Mbit/s] (sum of its flows)",
        totals(thr, MBIT, "total") + [rate_trace],
        {},
    )
    built["throughput_flow"] = ("[Mbit/s]", flows(thr, MBIT) + [rate_trace], {})
    built["goodput"] = (
        f"[Mbit/s], trailing mean over {window * run.interval_s * 1e3:g} ms (one RTT + one sample)",
        flows(good, MBIT) + [rate_trace],
        {},
    )
    built["sending_rate"] = (
        "[Mbit/s] (incl. retransmissions)",
        flows(run.wide("sending_rate_bps"), MBIT) + [rate_trace],
        {},
    )
    built["pacing_rate"] = ("[Mbit/s]", flows(run.wide("pacing_rate_bps"), MBIT), {})
    if len(run.flows) >= 2 and not thr.empty:
        jain = m.jain_over_time(thr, run.flows)
        built["fairness"] = (
            "(Jain index of the active flows)",
            [
                _trace(
                    jain.index.to_numpy(dtype=float),
                    jain.to_numpy(dtype=float),
                    name="Jain index",
                    line={"color": "#000000", "width": 1},
                )
            ],
            {},
        )
    else:
        built["fairness"] = ("(needs two or more flows)", [], {})
    built["rtt"] = (
        "[ms]" if rtt_col == "rtt_ms" else "smoothed (tcpi_rtt) [ms]",
        flows(run.wide(rtt_col), 1) + probe_report.html_traces(run, _values),
        {},
    )
    built["cwnd"] = ("[packets]", flows(run.wide("cwnd_pkts"), 1), {})
    built["inflight"] = ("[packets]", flows(run.wide("inflight_pkts"), 1), {})
    built["backlog"] = (
        "[packets]",
        [
            _trace(
                qt,
                q["backlog_pkts"].to_numpy(dtype=float),
                name="backlog",
                line={"color": "#000000", "width": 1},
            )
        ]
        if "backlog_pkts" in q
        else [],
        {},
    )
    built["drops"] = (
        "[packets / interval]",
        [
            _trace(
                qt,
                pd.to_numeric(q[c], errors="coerce").fillna(0).to_numpy(),
                name=name,
                line={"color": color, "width": 1, "shape": "hv"},
            )
            for c, name, color in (("drops", "drops", "#777777"), ("marks", "CE marks", "#ff7f0e"))
            if c in q
        ],
        {},
    )
    retx = run.wide("retransmits")
    built["retransmissions"] = (
        "[packets / interval]",
        totals(retx, 1, "retransmissions") if not retx.empty else [],
        {},
    )
    label, traces = estimate(("btlbw", "bw"), "a bandwidth estimate")
    built["bw_estimate"] = (label, traces + ([rate_trace] if traces else []), {})
    label, traces = estimate(("min_rtt", "rtprop"), "min_rtt")
    built["min_rtt"] = (label, traces, {})
    mode_col = sr.state_column(run)
    built["mode"] = (
        "" if mode_col else "(no algorithm reports a mode)",
        per_flow_modes(mode_col) if mode_col else [],
        {"type": "category"},
    )
    return [
        (sr.panel_title(key, built[key][0]), built[key][1], built[key][2])
        for key, _ in sr.TIME_PANELS
    ]


def _stack(
    panels: list[tuple[str, list[dict[str, Any]], dict[str, Any]]], xlabel: str
) -> dict[str, Any]:
    """One plotly figure: the panels stacked on one shared x axis, one y axis each."""
    n = len(panels)
    gap = 0.35 / max(n, 1) / 2
    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {
        "height": 230 * n + 80,
        "margin": {"l": 90, "r": 20, "t": 30, "b": 50},
        "hovermode": "x",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom"},
        "annotations": [],
        "xaxis": {"title": {"text": xlabel}, "anchor": f"y{n if n > 1 else ''}"},
    }
    seen: set[str] = set()
    for k, (title, traces, axis) in enumerate(panels):
        suffix = "" if k == 0 else str(k + 1)
        top = 1 - k / n
        domain = [max(0.0, top - 1 / n + gap), top - gap]
        layout[f"yaxis{suffix}"] = {"domain": domain, "anchor": "x", "zeroline": False, **axis}
        layout["annotations"].append(
            {
                "text": title,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": domain[1],
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 12},
            }
        )
        for tr in traces:
            group = tr.get("legendgroup", tr.get("name", ""))
            data.append(
                {**tr, "xaxis": "x", "yaxis": f"y{suffix}", "showlegend": group not in seen}
            )
            seen.add(group)
    return {"data": data, "layout": layout}


def _cdfs(run: Any) -> dict[str, Any]:
    """The RTT and per-flow throughput CDFs side by side, one line per algorithm."""
    colors = {cc: _hex(c) for cc, c in p.algorithm_colors(run).items()}
    rtt_col = "rtt_ms" if run.series["rtt_ms"].notna().any() else "srtt_ms"
    data = []
    for k, (col, scale) in enumerate(((rtt_col, 1.0), ("throughput_bps", MBIT))):
        wide = run.wide(col)
        for label, cc, fids, j in sr.cdf_groups(run):
            cols = [f for f in wide.columns if int(f) in fids]
            x, prob = (
                sr.ecdf(wide[cols].to_numpy(dtype=float).ravel() / scale) if cols else ([], [])
            )
            xd, pd_ = sr.decimate(x, prob, HTML_BUCKETS)
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": _values(xd),
                    "y": _values(pd_),
                    "name": label,
                    "legendgroup": label,
                    "showlegend": k == 0,
                    "line": {
                        "color": colors[cc],
                        "shape": "hv",
                        "dash": DASHES[j % len(DASHES)],
                    },
                    "xaxis": "x" if k == 0 else "x2",
                    "yaxis": "y" if k == 0 else "y2",
                }
            )
    layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {"domain": [0, 0.46], "title": {"text": "RTT per interval [ms]"}},
        "yaxis": {"title": {"text": "fraction of samples"}, "range": [0, 1.02]},
        "xaxis2": {
            "domain": [0.54, 1],
            "anchor": "y2",
            "title": {"text": "per-flow throughput per interval [Mbit/s]"},
        },
        "yaxis2": {"anchor": "x2", "range": [0, 1.02]},
    }
    return {"data": data, "layout": layout}


def _throughput_delay(result: Any) -> dict[str, Any]:
    """The throughput-delay plot of report.png (plots.throughput_delay): one point per
    flow, goodput against 95th-percentile RTT, the delay axis reversed."""
    run = result.run
    colors = {cc: _hex(c) for cc, c in p.algorithm_colors(run).items()}
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "x": _values(x),
            "y": _values(y / MBIT),
            "text": [f"flow {f}" for f in ids],
            "name": label,
            "marker": {"color": colors[cc], "symbol": PLOTLY_MARKERS[k % 8], "size": 8},
        }
        for cc, k, label, ids, x, y in sr.throughput_delay_groups(run, result.summary)
    ]
    layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {
            "title": {"text": "95th-percentile RTT [ms] (better ->)"},
            "autorange": "reversed",
        },
        "yaxis": {"title": {"text": "goodput [Mbit/s]"}, "rangemode": "tozero"},
    }
    return {"data": data, "layout": layout}


# plots.MARKERS in plotly's names.
PLOTLY_MARKERS = (
    "circle", "square", "triangle-up", "diamond", "triangle-down", "cross", "x", "star"
)  # fmt: skip


def _cell(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return "" if v is None else str(v)
    if isinstance(v, float):
        return "" if v != v else f"{v:.6g}"
    if isinstance(v, (int, np.integer)):
        return str(v)
    if isinstance(v, (np.floating,)):
        return _cell(float(v))
    return str(v)


def _scaled(name: str, v: Any) -> str:
    """``v`` of the column or metric ``name`` in the unit the PNG report and compare use
    (:func:`tcplab.report.units.unit`: 12.23 for 12232300 bit/s in Mbit/s), four
    significant digits; text and integers (counts) as they are (the page
    printed 1.22323e+07 where report.png says 12.23M)."""
    scale, _ = unit(name)
    if isinstance(v, (float, np.floating)) and v == v:
        return f"{float(v) / scale:.4g}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and scale != 1.0:
        return f"{int(v) / scale:.4g}"
    return _cell(v)


def _header(name: str) -> str:
    """A table header with the unit its values are shown in (none for fractions)."""
    text = unit(name)[1]
    return f"{name} [{text}]" if text and text not in ("fraction", "index, 1 = fair") else name


def _json(fig: dict[str, Any]) -> str:
    """A figure as compact JSON. orjson, not json: a 600 s run's figures are about 1 MB
    of numbers, which json.dumps took 0.028 CPU s to write and orjson 0.007.
    The values are the same (each float's shortest round-trip form); the spelling of a
    few exponents differs (1e-05 is 0.00001) and text is UTF-8 rather than \\u escapes
    (the page is written and declared as UTF-8). NaN never reaches here (_values makes
    gaps null)."""
    text = orjson.dumps(fig, option=orjson.OPT_NON_STR_KEYS).decode()
    # "</" cannot end the <script> early: JSON allows "<\/" for "</".
    return text.replace("</", "<\\/")


def run_html(result: Any) -> str:
    """The run's report.html (see the module docstring)."""
    run = result.run
    summary = result.summary.reset_index()
    flow_cols = [c for c in summary.columns if not str(c).startswith("cc_")]
    figures = {
        "fig-series": _stack(_time_panels(result), "time [s]"),
        "fig-cdfs": _cdfs(run),
        "fig-tput-delay": _throughput_delay(result),
    }
    return (
        environment()
        .get_template("run.html.j2")
        .render(
            title=sr.run_title(run),
            name=run.spec.experiment.name,
            aggregate=[(_header(k), _scaled(k, v)) for k, v in result.aggregate.items()],
            by_cc=[
                (
                    cc,
                    g.get("flows"),
                    _scaled("share", g.get("share")),
                    _scaled("share", g.get("share_minus_fair_share")),
                )
                for cc, g in result.summary_json.get("by_cc", {}).items()
            ],
            probes=probe_report.html_rows(result),
            flow_columns=[_header(str(c)) for c in flow_cols],
            flow_rows=[
                [_scaled(str(c), v) for c, v in zip(flow_cols, row)]
                for row in summary[flow_cols].itertuples(index=False)
            ],
            spec=spec_toml(result.spec),
            plots=[(k, _json(v)) for k, v in figures.items()],
            plotly_js=plotly_js(),
        )
    )


def write_sweep_html(out: Any, plan: Any, table: pd.DataFrame) -> Any:
    """Write ``out/report.html`` for a sweep (atomically: a reader never sees half a page);
    return its path."""

    # Titled with the experiment's name, as a run's report is ("sweep" only for a
    # sweep.json written before it recorded the name).
    doc = {"name": plan.name or "sweep", "axes": plan.axes, "repeat": plan.repeat}
    doc["metrics"] = plan.metrics
    path = Path(out) / "report.html"
    tmp = path.with_name(tmp_prefix("report.html") + "x")
    tmp.write_text(sweep_html(plan, table, doc), encoding="utf-8")
    os.replace(tmp, path)
    return path


def sweep_html(plan: Any, table: pd.DataFrame, doc: dict[str, Any]) -> str:
    """The sweep's report.html: per swept parameter a figure of the summary panels with
    95 % confidence intervals, the table of point means, and the grid (``doc``: a name
    and sweep.json's axes, repeat and metrics)."""
    figures = []
    points = []
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
    for axis_name in plan.axes:
        axis = sp.axis_of(axis_name, plan.axes[axis_name])
        shown = sp.panels(plan, table)
        data = []
        layout: dict[str, Any] = {
            "height": 340 * max(1, math.ceil(len(shown) / 2)) + 60,
            "margin": {"l": 70, "r": 20, "t": 40, "b": 50},
            "annotations": [],
        }
        rows = max(1, math.ceil(len(shown) / 2))
        for k, panel in enumerate(shown):
            metric = "share" if panel == sp.SHARES else panel
            scale, _ = unit(metric)
            r, c = divmod(k, 2)
            s = "" if k == 0 else str(k + 1)
            xdom = [0, 0.45] if c == 0 else [0.55, 1]
            top = 1 - r / rows
            # room below each panel for its x axis title, above for its own title
            ydom = [max(0.0, top - 1 / rows + 0.24 / rows), top - 0.08 / rows]
            xaxis: dict[str, Any] = {
                "domain": xdom,
                "anchor": f"y{s}",
                "title": {"text": axis.label},
            }
            if axis.numbers is None:
                xaxis.update(tickvals=list(range(len(axis.values))), ticktext=axis.values)
            elif axis.log:
                ticks = [f"{v:g}" for v in axis.numbers]
                xaxis.update(type="log", tickvals=axis.numbers, ticktext=ticks)
            layout[f"xaxis{s}"] = xaxis
            layout[f"yaxis{s}"] = {
                "domain": ydom,
                "anchor": f"x{s}",
                "title": {"text": sp.metric_label(metric)},
            }
            layout["annotations"].append(
                {
                    "text": panel,
                    "xref": "paper",
                    "yref": "paper",
                    "x": xdom[0],
                    "y": ydom[1],
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "showarrow": False,
                }
            )
            for j, (label, g) in enumerate(sp.series_of(plan, table, axis, panel)):
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers",
                        "x": _values(g["x"]),
                        "y": _values(g["mean"] / scale, 6),
                        "error_y": {"type": "data", "array": _values(g["ci"] / scale, 6)},
                        "name": f"{panel}: {label}" if label else panel,
                        "showlegend": bool(label),
                        "line": {"color": palette[j % len(palette)]},
                        "xaxis": f"x{s}",
                        "yaxis": f"y{s}",
                    }
                )
                for row in g.itertuples(index=False):
                    points.append(
                        [axis_name, row.value, panel if not label else f"{panel}: {label}"]
                        + [_cell(row.mean / scale), _cell(row.ci / scale), row.n]
                    )
        figures.append((f"axis{len(figures)}", axis_name, _json({"data": data, "layout": layout})))
    return (
        environment()
        .get_template("sweep.html.j2")
        .render(
            title=doc.get("name") or "sweep",
            grid=json.dumps(
                {k: doc.get(k) for k in ("axes", "repeat", "metrics")}, indent=1, default=str
            ),
            runs=len(table),
            caption=sp.caption(int(plan.repeat), "each parameter"),
            figures=figures,
            plots=[(f"fig-{fid}", fig) for fid, _, fig in figures],
            points=points,
            plotly_js=plotly_js(),
        )
    )
