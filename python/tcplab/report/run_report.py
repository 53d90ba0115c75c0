"""The multi-panel run report (report.png, report.pdf and report.html), after the TUM
framework's automatic report (Jaeger et al. 2019, Sec. 3.4): every time-resolved quantity
of a run on aligned time axes, a shared legend on top.

Three columns: rates (each algorithm's total first, since the usual question is "how do
the algorithms share the link", then per flow), delay and loss (RTT, windows, queue, drops,
retransmissions), and the algorithms' own state with the distributions (CDFs of RTT and of
per-flow throughput) and the numbers. A flow is drawn in its algorithm's colour, told from
the algorithm's other flows by line style (plots.py). Goodput is smoothed over an RTT-sized
window and releases of held data are marked (series.py, docs/METRICS.md).

Files: report.png and report.html by default; report.pdf only on request (``pdf=True``,
``--pdf``): it is the same figure as the PNG and cost about a third of the report's time.
REPORT_FILES names the default files, PDF_FILE the optional one.

Speed (benches/report_speed.py, figures in benches/RESULTS.md): fixed margins
instead of tight_layout, series decimated to the panel width, x tick labels only under
each column's last time panel, ticks built once at their drawn positions with the grid as
line collections (ticks.py), unhinted PNG text (PNG_RC), the cyclic garbage collector
paused while drawing, and PNG and PDF written from the one figure.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from tcplab.metric_table import panel_lines
from tcplab.report import plots as p
from tcplab.report import probes as probe_report
from tcplab.report import series as sr
from tcplab.report import ticks
from tcplab.report.html import run_html
from tcplab.specs.units import format_time

# The default report; PDF_FILE only when asked for (it repeats report.png as vectors).
REPORT_FILES = ("report.png", "report.html")
PDF_FILE = "report.pdf"


# The numbers row lists every flow up to this many; beyond, one line per group of flows
# (algorithm and RTT), so the table fits whatever the flow count (issue 45: 10 flows were
# cut after the 6th).
FLOW_TABLE_ROWS = 24
# Inches per line of the numbers row's 8 pt monospace text, and its top and bottom margin.
TEXT_LINE_IN = 0.145
TEXT_MARGIN_IN = 0.35


def _numbers_blocks(result: Any) -> list[list[str]]:
    """The report's numbers as three text blocks: the aggregate metrics, each
    algorithm's share, and the flows (each flow, or each group of flows when there are
    more than FLOW_TABLE_ROWS)."""
    aggregate = list(panel_lines(result.aggregate))  # the metrics with a panel place
    aggregate += probe_report.number_lines(result)  # [[probes]]: RTT under load
    algorithms = ["algorithm   flows  share (of bytes received)"]
    for cc, g in result.summary_json.get("by_cc", {}).items():
        algorithms.append(
            f"{str(cc)[:10]:<10}  {g.get('flows', 0):>5}  {_fmt(g.get('share'), '.3f')}"
        )
    summary = result.summary
    if len(summary) <= FLOW_TABLE_ROWS:
        flows = ["flow  cc          goodput   share  retx   mean RTT"]
        for fid, row in summary.iterrows():
            # A flow with nothing delivered has no goodput, share or RTT (null in
            # summary.json): shown as n/a, not a TypeError.
            flows.append(
                f"{int(fid):>4}  {str(row['cc'])[:10]:<10} "
                f"{_fmt(row.get('goodput_bps'), '7.2f', 1e6)}M"
                f"  {_fmt(row.get('share'), '5.3f')}"
                f"  {_fmt(row.get('retransmitted_packets'), '>5.0f')}"
                f"  {_fmt(row.get('mean_rtt_ms'), '6.1f')} ms"
            )
        return [aggregate, algorithms, flows]
    flows = [
        f"{len(summary)} flows in {{groups}} groups (every flow: summary.json, report.html)",
        "group              flows  goodput median [min, max]   share  retx   mean RTT",
    ]
    by_flow = summary.set_index("flow") if "flow" in summary.columns else summary
    groups = sr.cdf_groups(result.run)
    for _label, cc, fids, _k in groups:
        label = sr.group_label(result.run, str(cc), fids)
        g = by_flow.loc[[f for f in fids if f in by_flow.index]]
        gp = g["goodput_bps"].astype(float) / 1e6
        flows.append(
            f"{label[:18]:<18} {len(g):>5}  {_fmt(gp.median(), '7.2f')}M "
            f"[{_fmt(gp.min(), '.2f')}, {_fmt(gp.max(), '.2f')}]"
            f"  {_fmt(g['share'].astype(float).sum(), '5.3f')}"
            f"  {_fmt(g['retransmitted_packets'].astype(float).sum(), '>5.0f')}"
            f"  {_fmt(g['mean_rtt_ms'].astype(float).mean(), '6.1f')} ms"
        )
    flows[0] = flows[0].format(groups=len(groups))
    return [aggregate, algorithms, flows]


def _numbers_row(axes: Any, blocks: list[list[str]]) -> None:
    for ax, lines in zip(axes, blocks):
        ax.axis("off")
        ax.text(
            0.0,
            1.0,
            "\n".join(lines),
            va="top",
            ha="left",
            family="monospace",
            fontsize=8,
            transform=ax.transAxes,
        )


def _fct_panels(ax_size: Any, ax_cdf: Any, summary: Any) -> None:
    """Flow completion time against transfer size (log-log, one point per finished flow,
    coloured by algorithm) and the empirical CDF of FCTs."""
    done = summary[summary["fct_s"].notna()]
    for i, (cc, g) in enumerate(done.groupby("cc")):
        ax_size.scatter(g["size_bytes"], g["fct_s"], s=8, alpha=0.7, color=f"C{i}", label=str(cc))
        x = np.sort(g["fct_s"].to_numpy())
        ax_cdf.step(
            x, np.arange(1, len(x) + 1) / len(x), where="post", color=f"C{i}", label=str(cc)
        )
    ax_size.set_xscale("log")
    ax_size.set_yscale("log")
    ax_size.set_xlabel("transfer size [bytes]")
    ax_size.set_ylabel("flow completion time [s]")
    ax_size.set_title(
        f"FCT against size ({len(done)} of {int(summary['size_bytes'].notna().sum())} finished)",
        fontsize=9,
        loc="left",
        y=1.0,
    )
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("flow completion time [s]")
    ax_cdf.set_ylabel("fraction of finished flows")
    ax_cdf.set_title("FCT distribution", fontsize=9, loc="left", y=1.0)
    for ax in (ax_size, ax_cdf):
        ax.grid(True, lw=0.3, alpha=0.6)
        ax.legend(loc="lower right", fontsize=7)
        ax.tick_params(labelsize=8)


def _fmt(v: Any, fmt: str, scale: float = 1.0) -> str:
    """``v / scale`` formatted, or "n/a" where there is no number (None, NaN, text)."""
    try:
        x = float(v) / scale
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if x != x else format(x, fmt)


def draw_report(result: Any) -> Any:
    """The report figure for a :class:`~tcplab.runs.result.Result` (needs ``result.run``)."""
    run = result.run
    # Finite flows add a row: FCT against size and the FCT distribution (runs without them
    # keep the six-row report).
    fct = "fct_s" in result.summary and result.summary["fct_s"].notna().any()
    rows = 7 if fct else 6
    # The numbers row at the bottom: as tall as its longest block (a table that fits).
    blocks = _numbers_blocks(result)
    text_h = TEXT_LINE_IN * max(len(b) for b in blocks) + TEXT_MARGIN_IN
    height = 3 * rows + text_h + 0.8
    fig = p.new_figure(figsize=(20, height))
    # Fixed margins (inches converted to fractions): tight_layout measured every label and
    # cost a third of the drawing time.
    grid = fig.add_gridspec(
        rows + 1,
        3,
        height_ratios=[3] * rows + [text_h],
        left=0.045,
        right=0.985,
        bottom=0.2 / height,
        top=1 - 1.25 / height,
        hspace=0.42 * 3 / (3 * rows + text_h) * (rows + 1),
        wspace=0.2,
    )
    axes = np.array([[fig.add_subplot(grid[r, c]) for c in range(3)] for r in range(rows)])
    _numbers_row([fig.add_subplot(grid[rows, c]) for c in range(3)], blocks)
    rates, delay, state = axes[:6, 0], axes[:6, 1], axes[:6, 2]
    if fct:
        _fct_panels(axes[6, 0], axes[6, 1], result.summary)
        axes[6, 2].axis("off")
    # Not shared x axes: every time axis spans the run (set below), and sharing would
    # give the inner axes tick objects only to hide them.
    time_axes = list(rates) + list(delay) + list(state[:3])
    b = run.spec.bottleneck

    def title(ax: Any, text: str) -> None:
        # An explicit y: matplotlib otherwise measures the axis' tick labels on every
        # draw to lift the title above them (a third of the drawing time).
        ax.set_title(text, fontsize=9, loc="left", y=1.0)

    thr = run.wide("throughput_bps")
    ax = rates[0]
    ax.set_ylabel("throughput [Mbit/s]")
    if thr.empty:
        p._no_data(ax, "not recorded")
    else:
        p.algorithm_totals(ax, run, thr, p.MBIT)
        p.bottleneck_rate(ax, run)
        ax.legend(loc="lower right", fontsize=7, ncol=2)
    title(
        ax,
        sr.panel_title("throughput_algorithm", "(sum of its flows' bytes reaching the receiver)"),
    )
    ax = rates[1]
    p.per_flow(ax, run, "throughput_bps", p.MBIT, "throughput [Mbit/s]", wide=thr)
    p.bottleneck_rate(ax, run)
    title(ax, sr.panel_title("throughput_flow"))
    window = sr.smoothing_samples(run, result.summary.get("mean_rtt_ms"))
    p.smoothed_goodput(rates[2], run, window)
    title(
        rates[2],
        sr.panel_title(
            "goodput",
            f"(trailing mean over {window * run.interval_s * 1e3:g} ms: one RTT + one sample)",
        ),
    )
    ax = rates[3]
    p.per_flow(ax, run, "sending_rate_bps", p.MBIT, "sending rate [Mbit/s]")
    p.bottleneck_rate(ax, run)
    title(ax, sr.panel_title("sending_rate", "(incl. retransmissions)"))
    p.per_flow(rates[4], run, "pacing_rate_bps", p.MBIT, "pacing rate [Mbit/s]")
    title(rates[4], sr.panel_title("pacing_rate"))
    p.fairness(rates[5], run)
    title(rates[5], sr.panel_title("fairness", "(Jain index of the active flows)"))

    ax = delay[0]
    if run.series["rtt_ms"].notna().any():
        p.per_flow(ax, run, "rtt_ms", 1.0, "RTT [ms]")
        p.annotate_delayed_ack(ax, run)
        title(ax, sr.panel_title("rtt", "per ACK, averaged per interval"))
    else:  # a kernel run: TCP_INFO has the smoothed RTT only (docs/METRICS.md)
        p.per_flow(ax, run, "srtt_ms", 1.0, "smoothed RTT [ms]")
        title(ax, sr.panel_title("rtt", "smoothed (tcpi_rtt)"))
    if probes := probe_report.draw(ax, run):  # [[probes]]: each echo's RTT, black dots
        ax.legend(handles=probes, loc="upper right", fontsize=7)
    p.per_flow(delay[1], run, "cwnd_pkts", 1.0, "cwnd [packets]")
    title(delay[1], sr.panel_title("cwnd"))
    ax = delay[2]
    p.per_flow(ax, run, "inflight_pkts", 1.0, "inflight [packets]")
    p.total_line(ax, run, "inflight_pkts", 1.0, "total inflight")
    if b.bdp_rtt:
        bdp = b.rate * b.bdp_rtt / 1e9 / 8 / (run.spec.tcp.mss + run.spec.tcp.header)
        ax.axhline(
            bdp,
            color="0.4",
            ls=":",
            lw=1.0,
            label=f"BDP ({bdp:.0f} pkts at {format_time(b.bdp_rtt)})",
        )
    ax.legend(loc="upper right", fontsize=7)
    title(ax, sr.panel_title("inflight", "vs BDP"))
    ax = delay[3]
    if not run.queue.empty and "backlog_pkts" in run.queue:
        p.line(
            ax,
            run.queue["time_s"].to_numpy(dtype=float),
            run.queue["backlog_pkts"].to_numpy(dtype=float),
            color="black",
            lw=0.9,
        )
        if b.buffer.unit == "pkt":
            ax.axhline(
                float(b.buffer.value), color="0.6", ls=":", lw=1.0, label=f"buffer {b.buffer}"
            )
            ax.legend(loc="upper right", fontsize=7)
    else:
        p._no_data(ax, "not recorded")
    ax.set_ylabel("backlog [packets]")
    with_sojourn = p.sojourn(ax, run)
    # The qdisc's measured sojourn is the queueing delay where an AQM records it;
    # elsewhere it is computed from the backlog at the link's rate.
    note = "and qdisc sojourn time (blue)" if with_sojourn else p.queueing_delay(ax, run)
    title(ax, sr.panel_title("backlog", note))
    p.drops(delay[4], run)
    title(delay[4], sr.panel_title("drops"))
    p.retransmissions(delay[5], run)
    title(delay[5], sr.panel_title("retransmissions", "(sum of its flows)"))

    p.cc_estimate(
        state[0],
        run,
        ("btlbw", "bw"),
        "bw estimate [Mbit/s]",
        "no algorithm reports a bandwidth estimate",
        with_rate=True,
    )
    title(state[0], sr.panel_title("bw_estimate"))
    p.cc_estimate(
        state[1], run, ("min_rtt", "rtprop"), "min_rtt [ms]", "no algorithm reports min_rtt"
    )
    title(state[1], sr.panel_title("min_rtt"))
    p.modes(state[2], run)
    title(state[2], sr.panel_title("mode"))
    p.rtt_cdf(state[3], run)
    title(state[3], "RTT distribution per algorithm")
    p.throughput_cdf(state[4], run)
    title(state[4], "per-flow throughput distribution per algorithm")
    cdfs = [state[3], state[4], state[5]]
    for ax in cdfs:
        ax.tick_params(labelsize=8)
        ax.yaxis.label.set_size(9)
        ax.xaxis.label.set_size(9)
    p.throughput_delay(state[5], result.summary, run)
    title(state[5], "throughput against delay, per flow")

    bottom = {rates[-1], delay[-1], state[2]}
    # Few ticks, each built once (report/ticks.py): time ticks and their labels only
    # under each column's last time panel (the x axis of the others is hidden, so it
    # builds no tick at all), four or five y ticks, and the grid as line collections.
    t_ticks = [
        t for t in MaxNLocator(nbins=6).tick_values(0, run.duration_s) if t <= run.duration_s
    ]
    for ax in time_axes + cdfs:
        if ax is not state[2]:  # the mode panel has one tick per mode
            ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
    for ax in time_axes:
        ax.set_xlim(0, run.duration_s)
        if ax in bottom:
            ax.tick_params(labelsize=8)
            ax.set_xticks(t_ticks)
        else:
            ax.tick_params(axis="y", labelsize=8)
            ax.xaxis.set_visible(False)
        ax.yaxis.label.set_size(9)
    for ax in time_axes + cdfs:
        ys = ticks.freeze(ax.yaxis) if ax is not state[2] else list(ax.get_yticks())
        xs = t_ticks if ax in time_axes else ticks.freeze(ax.xaxis)
        ticks.grid(ax, xs, ys)
    for ax in bottom:
        ax.set_xlabel("time [s]", fontsize=9)
    fig.suptitle(sr.run_title(run), fontsize=11, y=1 - 0.15 / height)
    handles, labels = _legend(run)
    fig.legend(
        handles,
        labels,
        loc="upper center",
        ncol=min(6, max(1, len(labels))),
        fontsize=8,
        bbox_to_anchor=(0.5, 1 - 0.4 / height),
        frameon=False,
    )
    return fig


def _legend(run: Any) -> tuple[list[Any], list[str]]:
    """Per-flow entries (colour of the algorithm, line style of the flow) up to
    plots.MANY_FLOWS flows; beyond, one entry per group of flows (algorithm and RTT,
    the bundles plots.flow_styles draws) with its flow count."""
    styles = p.flow_styles(run)
    if len(run.flows) <= p.MANY_FLOWS:
        handles = [
            Line2D([], [], color=styles[int(f)]["color"], ls=styles[int(f)]["ls"], lw=1.5)
            for f in run.flows.index
        ]
        return handles, [p.flow_label(run, fid) for fid in run.flows.index]
    handles, labels = [], []
    for _label, cc, fids, _k in sr.cdf_groups(run):
        st = styles[fids[0]]
        handles.append(Line2D([], [], color=st["color"], ls=st["ls"], lw=1.5))
        n = f"{len(fids)} flow{'s' if len(fids) != 1 else ''}"
        labels.append(f"{sr.group_label(run, str(cc), fids)} ({n})")
    return handles, labels


def report_files(pdf: bool = False) -> list[str]:
    """The report files a run directory gets: REPORT_FILES, and PDF_FILE with ``pdf``."""
    return [REPORT_FILES[0], *([PDF_FILE] if pdf else []), *REPORT_FILES[1:]]


# Text rendered from the glyph outlines as they are, without FreeType's hinting (snapping
# them to the pixel grid): the same text with slightly softer edges, and about a tenth of
# the PNG's time less (benches/RESULTS.md). The PDF is vectors and unaffected.
PNG_RC = {"text.hinting": "no_hinting"}


def write_png(fig: Any, directory: Path) -> None:
    """report.png (deterministic bytes: no software tag)."""
    # zlib level 1: a fifth of the PNG's time at level 6 for a file about a third larger.
    with matplotlib.rc_context(PNG_RC):
        fig.savefig(
            directory / "report.png",
            dpi=90,
            metadata={"Software": None},
            pil_kwargs={"compress_level": 1},
        )


def write_pdf(fig: Any, directory: Path) -> None:
    """report.pdf from the same figure (deterministic bytes: no dates, no producer)."""
    fig.savefig(
        directory / PDF_FILE,
        metadata={"CreationDate": None, "Producer": None, "Creator": None},
    )


def write_html(result: Any, directory: Path) -> None:
    """report.html: the interactive report (tcplab.report.html)."""
    (directory / "report.html").write_text(run_html(result), encoding="utf-8")


def save_report(result: Any, directory: str | Path, pdf: bool = False) -> list[str]:
    """Write report.png and report.html into ``directory``, and report.pdf with ``pdf``;
    return their names (:func:`report_files`). Deterministic bytes for a given run."""
    d = Path(directory)
    with _no_cyclic_gc():
        fig = draw_report(result)
        write_png(fig, d)
        if pdf:
            write_pdf(fig, d)
        write_html(result, d)
    return report_files(pdf)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the report is drawn: the figure's
    tens of thousands of artists, paths and texts triggered about one full collection
    per report, which walked every object of the process (pandas, matplotlib: about
    200,000) for 0.08-0.1 CPU s and found almost nothing to free, since the figure is
    alive until it is written. Its cycles are collected by the next collection after
    the report (benches/RESULTS.md). Reference counting frees the rest as
    usual; a caller who had the collector off keeps it off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
