"""Panel functions for the run report: each draws one quantity on a given axis, from a
:class:`~tcplab.analysis.rundata.RunData`. Rates are shown in Mbit/s, times in s.

Readable with many flows: a flow's colour is its algorithm's, its line style tells it from
the other flows of that algorithm, and the algorithms' totals are drawn thick beside them.
Long series are decimated to the panel's pixels (:func:`tcplab.report.series.decimate`),
which keeps every spike visible and drawing fast (a 600 s run in < 0.5 s).
"""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcplab.analysis import metrics as m
from tcplab.analysis.rundata import RunData
from tcplab.report import series as sr
from tcplab.report import units

MBIT = units.MBIT
# Buckets per panel for decimation: about the pixel width of one report column
# (20 in / 3 columns at 90 dpi = 600 px).
PIXELS = 600
LINE_STYLES = ["-", "--", ":", "-."]
# Above this many flows, per-flow lines are drawn thinner and lighter, under the totals.
MANY_FLOWS = 6


def new_figure(**kwargs: Any) -> Figure:
    """A figure that belongs to no pyplot backend: reports draw into it and save it
    without touching the user's backend (``matplotlib.use("Agg")`` at import turned off a
    notebook's inline backend), and nothing has to close it."""
    return Figure(**kwargs)


def algorithm_colors(run: RunData) -> dict[str, Any]:
    """One colour per algorithm, in order of its first flow."""
    return algorithm_palette()(sr.algorithms(run))


def algorithm_palette() -> Any:
    """A colour per algorithm that stays the same across calls: each call with a list of
    algorithm names returns their colours, the k-th algorithm ever seen getting tab10's
    k-th colour (so several runs drawn together keep the first run's colours)."""
    cmap = matplotlib.colormaps["tab10"]
    seen: dict[str, Any] = {}

    def colors(ccs: Any) -> dict[str, Any]:
        for cc in ccs:
            seen.setdefault(cc, cmap(len(seen) % cmap.N))
        return dict(seen)

    return colors


def flow_styles(run: RunData) -> dict[int, dict[str, Any]]:
    """Per flow: its algorithm's colour and a line style. Up to MANY_FLOWS flows the
    style tells the flow from its algorithm's other flows (their k-th flow gets
    ``LINE_STYLES[k % 4]``); beyond, flows are drawn as groups (issue 45: ten flows in
    five shades by five styles could not be read): the style is the flow's RTT group
    within its algorithm (series.cdf_groups), thin and translucent, so that a panel
    shows each (algorithm, RTT) group as a bundle the legend names."""
    colors = algorithm_colors(run)
    many = len(run.flows) > MANY_FLOWS
    out = {}
    if many:
        for _label, cc, fids, k in sr.cdf_groups(run):
            for fid in fids:
                out[fid] = {
                    "color": colors[cc],
                    "ls": LINE_STYLES[k % len(LINE_STYLES)],
                    "lw": 0.7,
                    "alpha": 0.55,
                }
        return out
    seen: dict[str, int] = {}
    for fid, cc in sr.algorithm_of(run).items():
        k = seen.get(cc, 0)
        seen[cc] = k + 1
        out[fid] = {"color": colors[cc], "ls": LINE_STYLES[k % len(LINE_STYLES)], "lw": 1.0}
    return out


def flow_label(run: RunData, fid: int) -> str:
    row = run.flows.loc[fid]
    rtt = row.get("rtt_ms", float("nan"))
    rtt_s = f", {rtt:g} ms" if rtt == rtt else ""
    return f"flow {fid} ({row['cc']}{rtt_s})"


def line(ax: Any, x: Any, y: Any, step: bool = False, **kw: Any) -> None:
    """A decimated line (or pre-step line) of ``y`` against ``x``."""
    xd, yd = sr.decimate(x, pd.to_numeric(pd.Series(y), errors="coerce"), PIXELS)
    if step:
        ax.step(xd, yd, where="pre", **kw)
    else:
        ax.plot(xd, yd, **kw)


def _no_data(ax: Any, what: str) -> None:
    ax.text(
        0.5, 0.5, what, transform=ax.transAxes, ha="center", va="center", color="0.5", fontsize=9
    )


def per_flow(
    ax: Any,
    run: RunData,
    column: str,
    scale: float = 1.0,
    ylabel: str = "",
    missing: str = "not recorded",
    step: bool = False,
    wide: pd.DataFrame | None = None,
) -> bool:
    """One line per flow of series ``column`` (or of ``wide``, flows as columns) divided by
    ``scale``, styled by :func:`flow_styles`. Returns whether anything was drawn."""
    if wide is None:
        wide = run.wide(column)
    ax.set_ylabel(ylabel)
    if wide.empty or not wide.notna().any().any():
        _no_data(ax, missing)
        return False
    styles = flow_styles(run)
    t = wide.index.to_numpy(dtype=float)
    for fid in run.flows.index:
        if fid in wide.columns:
            y = pd.to_numeric(wide[fid], errors="coerce").to_numpy(dtype=float) / scale
            line(ax, t, y, step=step, **styles[int(fid)])
    return True


def algorithm_totals(
    ax: Any, run: RunData, wide: pd.DataFrame, scale: float, what: str = "total"
) -> pd.DataFrame:
    """Each algorithm's total (the sum over its flows) as a thick line in its colour, and
    the all-flows total dashed black. Returns the totals (unscaled)."""
    totals = sr.per_algorithm_total(wide, sr.algorithm_of(run))
    if totals.empty:
        return totals
    colors = algorithm_colors(run)
    counts = run.flows["cc"].astype(str).value_counts()
    t = totals.index.to_numpy(dtype=float)
    for cc in totals.columns:
        n = int(counts.get(cc, 0))
        line(
            ax,
            t,
            totals[cc].to_numpy() / scale,
            color=colors.get(cc, "k"),
            lw=2.0,
            label=f"{cc} {what} ({n} flow{'s' if n != 1 else ''})",
        )
    if len(totals.columns) > 1:
        line(
            ax,
            t,
            totals.sum(axis=1).to_numpy() / scale,
            color="black",
            lw=0.8,
            ls="--",
            label=f"all flows {what}",
        )
    return totals


def total_line(ax: Any, run: RunData, column: str, scale: float, label: str = "total") -> None:
    wide = run.wide(column)
    if not wide.empty:
        line(
            ax,
            wide.index.to_numpy(dtype=float),
            wide.fillna(0).sum(axis=1).to_numpy() / scale,
            color="black",
            lw=0.8,
            ls="--",
            label=label,
        )


def bottleneck_rate(ax: Any, run: RunData) -> None:
    """The bottleneck rate as a grey step line (changes with events)."""
    t = np.array([0.0] + [e[0] for e in run.bottleneck_events()] + [run.duration_s])
    r = m.rate_at(t, run.bottleneck_rate(), run.bottleneck_events()) / MBIT
    ax.step(t, r, where="post", color="0.6", lw=1.0, label="bottleneck rate")


def smoothed_goodput(ax: Any, run: RunData, samples: int) -> pd.DataFrame:
    """Per-flow goodput as the trailing mean over ``samples`` samples (RTT-sized, see
    :mod:`tcplab.report.series`), and a marker on every sample that still reads above the
    link rate, saying why (held data released in order after a repaired loss). Returns the
    smoothed goodput (bit/s)."""
    smooth = sr.trailing_mean(run.wide("goodput_bps"), samples)
    window_ms = samples * run.interval_s * 1e3
    drawn = per_flow(
        ax,
        run,
        "goodput_bps",
        MBIT,
        f"goodput, {window_ms:g} ms mean [Mbit/s]",
        wide=smooth,
    )
    if not drawn:
        return smooth
    bottleneck_rate(ax, run)
    t = smooth.index.to_numpy(dtype=float)
    # The highest rate in force during the window: bytes that crossed before a rate drop
    # are not a release of held data.
    rate = pd.Series(link_rate_at(run, t)).rolling(samples, min_periods=1).max().to_numpy()
    above = sr.above_link_rate(smooth, rate)
    styles = flow_styles(run)
    marked = False
    for fid in smooth.columns:
        hit = above[fid].to_numpy()
        if hit.any():
            ax.plot(
                t[hit],
                smooth[fid].to_numpy()[hit] / MBIT,
                ls="none",
                marker="v",
                ms=4,
                color=styles[int(fid)]["color"],
                label=None if marked else "above the link rate: held data released in order",
            )
            marked = True
    ax.legend(loc="lower right", fontsize=7)
    return smooth


def link_rate_at(run: RunData, t: Any) -> np.ndarray:
    """The bottleneck rate (bit/s) at the sample times ``t``, with its ``[[events]]``.
    A sample covers the interval before it, so a change at a sample's time applies from
    the next sample on (the lower of the two rates would be stricter for one sample)."""
    t = np.asarray(t, dtype=float)
    return np.asarray(
        m.rate_at(t - run.interval_s / 2, run.bottleneck_rate(), run.bottleneck_events()),
        dtype=float,
    )


def find_cc_column(run: RunData, *needles: str) -> str | None:
    """The first numeric ``cc_*`` column with data whose name contains one of ``needles``
    (a kernel run has the simulator's columns, and the ones ``tcp_bbr_info`` lacks, such
    as ``cc_btlbw_bps``, are all NaN: its bandwidth is ``cc_bw_bps``)."""
    for needle in needles:
        for c in run.series.columns:
            if (
                c.startswith("cc_")
                and needle in c
                and pd.api.types.is_numeric_dtype(run.series[c])
                and run.series[c].notna().any()
            ):
                return c
    return None


def cc_estimate(
    ax: Any,
    run: RunData,
    needles: tuple[str, ...],
    ylabel: str,
    missing: str,
    with_rate: bool = False,
) -> None:
    """An algorithm's own estimate per flow: the first ``cc_*`` column naming one of
    ``needles`` (see :func:`find_cc_column`), in the unit its name gives; if no algorithm
    reports one, ``ylabel`` and the note ``missing``. ``with_rate`` adds the bottleneck
    rate and a legend (for bandwidth estimates)."""
    col = find_cc_column(run, *needles)
    if not col:
        ax.set_ylabel(ylabel)
        _no_data(ax, missing)
        return
    sc, unit = units.unit(col)
    per_flow(ax, run, col, sc, f"{short_name(col)} [{unit}]")
    if with_rate:
        bottleneck_rate(ax, run)
        ax.legend(loc="upper right", fontsize=7)


def short_name(column: str) -> str:
    """``cc_btlbw_bps -> btlbw``: the name without the cc_ prefix and unit suffix."""
    name = column[3:] if column.startswith("cc_") else column
    for suffix in ("_bps", "_us", "_ns", "_ms", "_pkts"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def modes(ax: Any, run: RunData) -> None:
    """The algorithm's mode/state label per flow as a categorical step plot."""
    col = sr.state_column(run)
    ax.set_ylabel("mode")
    if col is None:
        _no_data(ax, "no algorithm reports a mode")
        return
    labels = [x for x in pd.unique(run.series[col].dropna().astype(str)) if x]
    order = {lab: i for i, lab in enumerate(labels)}
    styles = flow_styles(run)
    n = max(1, len(run.flows))
    for j, fid in enumerate(run.flows.index):
        sel = sr.active_rows(run, fid)
        y = sel[col].astype("string").map(order).astype(float)
        off = (j - (n - 1) / 2) * min(
            0.08, 0.6 / n
        )  # small offset so overlapping flows stay visible
        line(ax, sel["time_s"].to_numpy(), y.to_numpy() + off, step=True, **styles[int(fid)])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.5, len(labels) - 0.5)


def drops(ax: Any, run: RunData) -> None:
    """Packets the bottleneck dropped (and CE-marked, with an aqm) per sample interval."""
    ax.set_ylabel("packets / interval")
    q = run.queue
    if q.empty or "drops" not in q.columns:
        _no_data(ax, "not recorded")
        return
    t = q["time_s"].to_numpy(dtype=float)
    d = pd.to_numeric(q["drops"], errors="coerce").fillna(0).to_numpy()
    xd, yd = sr.decimate(t, d, PIXELS)
    ax.fill_between(xd, yd, step="pre", color="0.55", label=f"drops ({int(d.sum())} in all)")
    if "marks" in q.columns:
        mk = pd.to_numeric(q["marks"], errors="coerce").fillna(0).to_numpy()
        line(
            ax,
            t,
            mk,
            step=True,
            color="tab:orange",
            lw=0.9,
            label=f"CE marks ({int(mk.sum())} in all)",
        )
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=7)


def retransmissions(ax: Any, run: RunData) -> None:
    """Retransmitted packets per sample interval, summed per algorithm (one line per
    algorithm stays readable with many flows; per-flow counts are in summary.json)."""
    ax.set_ylabel("packets / interval")
    wide = run.wide("retransmits")
    if wide.empty or not wide.notna().any().any():
        _no_data(ax, "not recorded")
        return
    totals = sr.per_algorithm_total(wide, sr.algorithm_of(run))
    colors = algorithm_colors(run)
    t = totals.index.to_numpy(dtype=float)
    for cc in totals.columns:
        y = totals[cc].to_numpy()
        line(ax, t, y, step=True, color=colors[cc], lw=1.0, label=f"{cc} ({int(y.sum())} in all)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=7)


def rtt_cdf(ax: Any, run: RunData) -> None:
    """Empirical CDF of the per-interval RTT samples of each algorithm's flows."""
    col = "rtt_ms" if run.series["rtt_ms"].notna().any() else "srtt_ms"
    ax.set_xlabel(("RTT" if col == "rtt_ms" else "smoothed RTT") + " per interval [ms]")
    _cdf(ax, run, col, 1.0)


def throughput_cdf(ax: Any, run: RunData) -> None:
    """Empirical CDF of the per-interval throughput of each algorithm's running flows."""
    ax.set_xlabel("per-flow throughput per interval [Mbit/s]")
    _cdf(ax, run, "throughput_bps", MBIT)


def _cdf(ax: Any, run: RunData, column: str, scale: float) -> None:
    ax.set_ylabel("fraction of samples")
    wide = run.wide(column)
    if wide.empty:
        _no_data(ax, "not recorded")
        return
    colors = algorithm_colors(run)
    drawn = False
    for label, cc, fids, k in sr.cdf_groups(run):
        cols = [f for f in wide.columns if int(f) in fids]
        x, p = sr.ecdf(wide[cols].to_numpy(dtype=float).ravel() / scale)
        if len(x):
            xd, pd_ = sr.decimate(x, p, PIXELS)
            ax.step(
                xd,
                pd_,
                where="post",
                color=colors[cc],
                ls=LINE_STYLES[k % len(LINE_STYLES)],
                lw=1.5,
                label=f"{label} (n={len(x)})",
            )
            drawn = True
    if drawn:
        ax.set_ylim(0, 1.02)
        ax.legend(loc="lower right", fontsize=7)
    else:
        _no_data(ax, "not recorded")


def fairness(ax: Any, run: RunData) -> None:
    """Jain's index F of the active flows' per-interval throughput."""
    thr = run.wide("throughput_bps")
    ax.set_ylabel("Jain index F")
    if thr.empty or len(run.flows) < 2:
        _no_data(ax, "needs two or more flows")
        return
    f = m.jain_over_time(thr, run.flows)
    line(ax, f.index.to_numpy(dtype=float), f.to_numpy(dtype=float), color="black", lw=1.0)
    ax.axhline(0.95, color="0.6", lw=0.8, ls=":", label="0.95")
    ax.set_ylim(max(0.0, 1.0 / len(run.flows) - 0.05), 1.02)
    ax.legend(loc="lower right", fontsize=7)


def sojourn(ax: Any, run: RunData) -> bool:
    """The qdisc's mean sojourn time per interval on a twin axis; False if not recorded."""
    if run.queue.empty or "sojourn_ms" not in run.queue.columns:
        return False
    tw = ax.twinx()
    line(
        tw,
        run.queue["time_s"].to_numpy(dtype=float),
        pd.to_numeric(run.queue["sojourn_ms"], errors="coerce").to_numpy(dtype=float),
        color="tab:blue",
        lw=0.8,
    )
    tw.set_ylabel("sojourn [ms]", color="tab:blue", fontsize=9)
    tw.tick_params(labelsize=8, colors="tab:blue")
    return True


def queueing_delay(ax: Any, run: RunData) -> str:
    """The bottleneck's queueing delay in ms beside its backlog in packets, so that no
    reader multiplies by the packet time (issue 45): backlog bytes over the link's rate
    at that moment (metrics.queueing_delay_ms, the summary's mean_queueing_delay_ms).
    At a constant rate it is the backlog axis relabelled (a secondary axis: one curve);
    with rate ``[[events]]`` the delay is its own line on a twin axis. Returns the
    title's note ("" when nothing was drawn: no backlog recorded)."""
    q = run.queue
    if q.empty or "backlog_bytes" not in q or "backlog_pkts" not in q:
        return ""
    events = run.bottleneck_events()
    rate = float(run.bottleneck_rate())
    if not events and rate > 0:
        wire = float(run.spec.tcp.mss + run.spec.tcp.header)
        ms_per_pkt = 8.0 * wire / rate * 1e3
        sec = ax.secondary_yaxis(
            "right", functions=(lambda p: p * ms_per_pkt, lambda d: d / ms_per_pkt)
        )
        sec.set_ylabel("queueing delay [ms]", fontsize=9)
        sec.tick_params(labelsize=8)
        return f"(right: queueing delay, {ms_per_pkt:.3g} ms per packet at the link rate)"
    t = q["time_s"].to_numpy(dtype=float)
    delay = m.queueing_delay_ms(q["backlog_bytes"], m.rate_at(t, rate, events))
    tw = ax.twinx()
    line(tw, t, delay, color="tab:purple", lw=0.8)
    tw.set_ylabel("queueing delay [ms]", color="tab:purple", fontsize=9)
    tw.tick_params(labelsize=8, colors="tab:purple")
    return "and queueing delay at the rate of the moment (purple)"


def throughput_delay(ax: Any, summary: pd.DataFrame, run: RunData) -> None:
    """The field's throughput-delay plot (as Pantheon draws it, Yan et al. 2018 Fig. 2):
    one point per flow, its goodput against its 95th-percentile RTT, the delay axis
    reversed so that better lies up and to the right; a colour per algorithm and a
    marker per RTT group (series.cdf_groups' grouping)."""
    ax.set_xlabel("95th-percentile RTT [ms] (better ->)")
    ax.set_ylabel("goodput [Mbit/s]")
    groups = sr.throughput_delay_groups(run, summary)
    if not groups:
        _no_data(ax, "no per-flow RTT and goodput")
        return
    colors = algorithm_colors(run)
    drawn = False
    for cc, k, label, _ids, x, y in groups:
        keep = np.isfinite(x) & np.isfinite(y)
        if not keep.any():
            continue
        ax.scatter(
            x[keep],
            y[keep] / MBIT,
            s=18,
            color=colors[cc],
            marker=MARKERS[k % len(MARKERS)],
            alpha=0.8,
            label=f"{label} ({int(keep.sum())})",
        )
        drawn = True
    if not drawn:
        _no_data(ax, "no flow has both an RTT and a goodput")
        return
    ax.set_ylim(bottom=0)
    ax.invert_xaxis()
    ax.legend(loc="lower left", fontsize=7)


# A marker per RTT group of an algorithm in throughput_delay (its k-th RTT).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


# Delayed ACKs (Linux TCP_DELACK_MIN, include/net/tcp.h: HZ / 25 = 40 ms): at a window of
# one or two segments the receiver holds its ACK for the timer, so the sender's RTT reads
# the path plus up to 40 ms. Intervals whose RTT sits this close to min RTT + 40 ms at
# such a window are marked on the RTT panel, naming the mechanism (issue 45).
DELACK_MS = 40.0
DELACK_TOLERANCE_MS = 8.0
DELACK_MAX_CWND = 3.0
# Marked only when at least this many intervals of a flow show it (one is noise).
DELACK_MIN_INTERVALS = 3


def delayed_ack_intervals(run: RunData) -> dict[int, np.ndarray]:
    """Per flow, the sample times whose RTT is within DELACK_TOLERANCE_MS of the flow's
    minimum RTT + DELACK_MS while its cwnd is at most DELACK_MAX_CWND segments."""
    rtt, cwnd = run.wide("rtt_ms"), run.wide("cwnd_pkts")
    out: dict[int, np.ndarray] = {}
    if rtt.empty or cwnd.empty:
        return out
    for fid in rtt.columns:
        if fid not in cwnd.columns:
            continue
        r = pd.to_numeric(rtt[fid], errors="coerce")
        c = pd.to_numeric(cwnd[fid], errors="coerce").reindex(r.index)
        if not r.notna().any():
            continue
        floor = float(r.min())
        hit = (r - (floor + DELACK_MS)).abs().le(DELACK_TOLERANCE_MS) & c.le(DELACK_MAX_CWND)
        if int(hit.sum()) >= DELACK_MIN_INTERVALS:
            out[int(fid)] = r.index.to_numpy(dtype=float)[hit.to_numpy()]
    return out


def annotate_delayed_ack(ax: Any, run: RunData) -> bool:
    """Mark the intervals of :func:`delayed_ack_intervals` on the RTT panel and say what
    they are; False when there are none."""
    found = delayed_ack_intervals(run)
    if not found:
        return False
    styles = flow_styles(run)
    rtt = run.wide("rtt_ms")
    for fid, times in found.items():
        ys = pd.to_numeric(rtt[fid], errors="coerce").reindex(times).to_numpy(dtype=float)
        ax.scatter(times, ys, s=10, marker="x", color=styles[fid]["color"], zorder=5)
    ax.text(
        0.01,
        0.97,
        f"x: RTT = min + {DELACK_MS:g} ms at cwnd <= {DELACK_MAX_CWND:g}: the receiver's "
        "delayed-ACK timer (Linux TCP_DELACK_MIN), not the path",
        transform=ax.transAxes,
        va="top",
        fontsize=7,
        color="0.3",
    )
    return True
