"""An entry's time series: one run of the entry (``[catalogue.timeseries]``: its grid
point ``at``, its seed) drawn against time, one panel per column, beside the paper's
numbers that its text places in time.

What is drawn:

- Our run: the per-flow columns of series.parquet one line per flow, coloured and styled
  as the run report does (report/plots.py: a flow's colour is its algorithm's, its line
  style tells it from that algorithm's other flows); a bottleneck column of queue.parquet
  (``backlog_pkts`` ...) as one line. Long series are decimated to the panel's pixels
  (report/series.py), which keeps every spike.
- The paper's marks, black and dashed, each tagged P1, P2 ... and listed under the panels
  as "P1: paper: <label> (<where>)": a level over a span as a segment from a to b at y, a
  level over the whole run as a segment over the drawn range, an event as a vertical line
  at t (in every panel, unless it names one).
- A caption saying that the paper's curve itself is not drawn.

Deviations: the paper's own curve is not reproduced. The sources are text extractions
of the papers: the figures' curves are not available as data, and a curve traced
by hand from a description would be invented. Only the numbers the text states are drawn.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

from tcplab.report import units
from tcplab.report.units import unit
from tcplab.reproduce.runner import at_point
from tcplab.reproduce.seeds import MORE_SEEDS_DIR
from tcplab.runs.result import load_run

CAPTION = (
    "Lines: our run. Black dashed (P1 ...): the numbers the paper's text states, with where it "
    "says them. The paper's curve itself is not available (text-only source), so it is not drawn."
)

# The mark's look: distinct from every flow line (those are coloured, never black dashed).
MARK_STYLE = {"color": "black", "ls": "--", "lw": 1.3, "zorder": 6}


def run_dir(res: Any, run: Any) -> Path:
    """Where a run of ``res`` is stored: the entry's sweep, or its extra seeds'
    (reproduce/seeds.py), which hold the seeds the sweep did not."""
    main = res.out / "runs" / run.digest
    return main if main.is_dir() else res.out / MORE_SEEDS_DIR / "runs" / run.digest


def chosen_run(res: Any) -> Any | None:
    """The run the timeseries draws: at its point, its seed (default the first), or None."""
    ts = res.entry.meta.timeseries
    sel = sorted(at_point(res.runs, ts.at), key=lambda r: r.seed)
    if ts.seed is not None:
        sel = [r for r in sel if r.seed == ts.seed]
    return sel[0] if sel else None


def plot_timeseries(res: Any, path: Path) -> bool:
    """Draw the timeseries of ``res`` (an EntryResult whose entry has one) into ``path``;
    False if the run it names is not among the runs (e.g. a seed that --quick leaves out)."""
    ts = res.entry.meta.timeseries
    if ts is None or res.out is None:
        return False
    run = chosen_run(res)
    if run is None:
        return False
    data = load_run(run_dir(res, run)).run
    fig = draw(data, ts, res.entry.meta, run.seed)
    fig.savefig(path, dpi=90)
    return True


def draw(data: Any, ts: Any, meta: Any, seed: int) -> Any:
    """The figure of ``ts`` (a ``Timeseries``) over one run's ``data`` (a RunData)."""
    from tcplab.report.plots import new_figure

    lo, hi = ts.time if ts.time is not None else (0.0, data.duration_s)
    beyond = ""
    if lo >= data.duration_s:  # a shortened run (--quick) ends before the range starts
        beyond = f" (the whole run: it ends before {lo:g}-{hi:g} s)"
        lo, hi = 0.0, data.duration_s
    hi = min(hi, data.duration_s)
    # Only the drawn range, so that decimation to the panel's pixels spends them there.
    data = dataclasses.replace(
        data,
        series=data.series[data.series["time_s"].between(lo, hi)],
        queue=data.queue[data.queue["time_s"].between(lo, hi)] if len(data.queue) else data.queue,
    )
    n = len(ts.columns)
    # Below the panels: the key of the marks (one line each) and the caption.
    key = [f"P{k}: paper: {m.label} ({m.where})" for k, m in enumerate(ts.paper, 1)]
    caption = textwrap.wrap(CAPTION, 150)
    foot = 0.13 * (len(key) + len(caption)) + 0.15  # inches: 7-point lines and a margin
    fig = new_figure(figsize=(9, 0.9 + 2.2 * n + foot))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    for ax, col in zip(axes[:, 0], ts.columns):
        _panel(ax, data, col)
        events: list[float] = []  # this panel's event times, to stack close tags
        for k, m in enumerate(ts.paper, 1):
            # A level belongs to its column's panel; an event without one, to every panel.
            if m.column == col or (m.column is None and (m.y is None or n == 1)):
                row = 0
                if isinstance(m.t, (int, float)):
                    # Tags of events closer than 3 % of the range would print over each
                    # other (bbrprime-fig03's 0.134 and 0.200 s in 12 s): one row down each.
                    row = sum(abs(m.t - t) < 0.03 * (hi - lo) for t in events)
                    events.append(m.t)
                draw_mark(ax, m, col, lo, hi, f"P{k}", row)
        ax.set_xlim(lo, hi)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    _legend(axes[0, 0], data, bool(ts.paper))
    at = ", ".join(f"{k} = {v}" for k, v in ts.at.items())
    fig.suptitle(
        f"{meta.figure}: {meta.title}\nour run"
        + (f" at {at}" if at else "")
        + f", seed {seed}{beyond}",
        fontsize=9,
        y=1 - 0.05 / fig.get_figheight(),
        va="top",
    )
    h = fig.get_figheight()
    fig.text(0.01, 0.05 / h, "\n".join([*key, *caption]), fontsize=7, color="0.2", va="bottom")
    # Room for the key below the panels (tight_layout makes room for the title).
    fig.tight_layout(rect=(0, foot / h, 1, 1))
    return fig


def _panel(ax: Any, data: Any, col: str) -> None:
    """One column of the run: a line per flow, or the bottleneck's one line."""
    # Here, not at the top: matplotlib's import would slow every command that draws nothing.
    import pandas as pd

    from tcplab.report import plots

    scale, unit = units.unit(col)
    label = f"{col} [{unit}]" if unit else col
    if col == "cc_mode":  # the algorithm's state by name, as the run report draws it
        plots.modes(ax, data)
        return
    if col in data.series.columns and col != "flow":
        plots.per_flow(ax, data, col, scale, label)
        return
    ax.set_ylabel(label)
    q = data.queue
    if col not in q.columns:
        plots._no_data(ax, f"{col}: not recorded in this run")
        return
    y = pd.to_numeric(q[col], errors="coerce").to_numpy(dtype=float) / scale
    plots.line(ax, q["time_s"].to_numpy(dtype=float), y, color="0.35", lw=1.0)


def draw_mark(ax: Any, m: Any, col: str, lo: float, hi: float, tag: str, row: int = 0) -> Any:
    """One paper mark on ``ax`` (values in ``col``'s unit, drawn in the panel's), tagged
    ``tag`` (the key below the panels says what it is; an event's tag ``row`` lines below
    the top, so close events' tags do not overlap); returns the Line2D, whose label is
    "paper: <label> (<where>)"."""
    scale, _ = unit(col)
    text = f"paper: {m.label} ({m.where})"
    if isinstance(m.t, list) or m.t is None:
        a, b = m.t if isinstance(m.t, list) else (lo, hi)
        y = m.y / scale
        (ln,) = ax.plot([a, b], [y, y], label=text, **MARK_STYLE)
        where, offset, va = (max(a, lo), y), (2, 2), "bottom"
        coords: Any = "data"
    else:
        ln = ax.axvline(m.t, label=text, **MARK_STYLE)
        where, offset, va = (m.t, 1.0), (2, -2 - 9 * row), "top"
        coords = ("data", "axes fraction")
    note = ax.annotate(
        tag,
        where,
        xycoords=coords,
        textcoords="offset points",
        xytext=offset,
        va=va,
        fontsize=7,
        fontweight="bold",
        zorder=7,
    )
    note.set_in_layout(False)
    return ln


def _legend(ax: Any, data: Any, marks: bool) -> None:
    """The flows' legend (colour and style as the lines) above the first panel, and the
    marks' style if there are any."""
    # Here, not at the top: matplotlib's import would slow every command that draws nothing.
    from matplotlib.lines import Line2D

    from tcplab.report import plots

    styles = plots.flow_styles(data)
    handles = [
        Line2D([], [], **{k: v for k, v in styles[int(fid)].items() if k != "alpha"})
        for fid in data.flows.index
    ]
    labels = [plots.flow_label(data, int(fid)) for fid in data.flows.index]
    if marks:
        handles.append(Line2D([], [], **{k: v for k, v in MARK_STYLE.items() if k != "zorder"}))
        labels.append("paper's stated value")
    # Above the panel, so that it hides no data.
    ax.legend(
        handles,
        labels,
        fontsize=7,
        ncol=min(4, len(labels)),
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        frameon=False,
    )
