"""The multi-panel run report (report.png and report.pdf), after the TUM framework's
automatic report (Jaeger et al. 2019, Sec. 3.4): every time-resolved quantity of a run on
aligned time axes, one colour per flow, a shared legend on top."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from tcplab.report import plots as p
from tcplab.spec.units import format_rate, format_time  # noqa: E402


def _title(run: Any) -> str:
    s = run.spec
    b = s.bottleneck
    buf = str(b.buffer)
    return (
        f"{s.experiment.name}  —  bottleneck {format_rate(b.rate)}, {format_time(b.delay)} one-way, "
        f"buffer {buf}, loss {b.loss:g}; {len(run.flows)} flows; seed {s.experiment.seed}; "
        f"{format_time(s.experiment.duration)}"
    )


def _summary_text(ax: Any, result: Any) -> None:
    ax.axis("off")
    a = result.aggregate

    def f(key: str, fmt: str, scale: float = 1.0) -> str:
        return _fmt(a.get(key), fmt, scale)

    lines = [
        f"total goodput   {f('total_goodput_bps', '.2f', 1e6)} Mbit/s",
        f"utilization     {f('utilization', '.3f')}",
        f"Jain F_tp       {f('jain_index', '.3f')}   mean F {f('jain_index_mean', '.3f')}",
        f"T_F95           {f('t_f95_s', '.1f')} s   F_avg {f('f_avg', '.3f')}",
        f"retransmitted   {f('retransmitted_packets', '.0f')} pkts",
        f"backlog         mean {f('mean_backlog_pkts', '.1f')}  max {f('max_backlog_pkts', '.0f')} pkts",
        f"queueing delay  {f('mean_queueing_delay_ms', '.2f')} ms (mean)",
        "",
        "flow  cc          goodput   share  retx   mean RTT",
    ]
    for fid, row in result.summary.iterrows():
        # A flow with nothing delivered has no goodput, share or RTT (null in
        # summary.json): shown as n/a, not a TypeError (issue 21).
        lines.append(
            f"{int(fid):>4}  {str(row['cc'])[:10]:<10} {_fmt(row.get('goodput_bps'), '7.2f', 1e6)}M"
            f"  {_fmt(row.get('share'), '5.3f')}  {_fmt(row.get('retransmitted_packets'), '>5.0f')}"
            f"  {_fmt(row.get('mean_rtt_ms'), '6.1f')} ms"
        )
        if len(lines) > 30:
            lines.append("  ...")
            break
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
    )
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("flow completion time [s]")
    ax_cdf.set_ylabel("fraction of finished flows")
    ax_cdf.set_title("FCT distribution", fontsize=9, loc="left")
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
    """The report figure for a :class:`~tcplab.results.Result` (needs ``result.run``)."""
    run = result.run
    # Finite flows add a row: FCT against size and the FCT distribution (runs without them
    # keep the seven-row report).
    fct = "fct_s" in result.summary and result.summary["fct_s"].notna().any()
    rows = 8 if fct else 7
    fig, axes = plt.subplots(rows, 2, figsize=(16, 3 * rows), sharex=False)
    left, right = axes[:, 0], axes[:, 1]
    if fct:
        _fct_panels(left[7], right[7], result.summary)
        left, right = left[:7], right[:7]
    time_axes = list(left) + list(right[:6])
    for ax in time_axes[1:]:
        ax.sharex(time_axes[0])

    ax = left[0]
    p.per_flow(ax, run, "throughput_bps", p.MBIT, "throughput [Mbit/s]")
    p.total_line(ax, run, "throughput_bps", p.MBIT)
    p.bottleneck_rate(ax, run)
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title("throughput (bytes reaching the receiver)", fontsize=9, loc="left")
    ax = left[1]
    p.per_flow(ax, run, "goodput_bps", p.MBIT, "goodput [Mbit/s]")
    ax.set_title("goodput (in order to the application)", fontsize=9, loc="left")
    ax = left[2]
    p.per_flow(ax, run, "sending_rate_bps", p.MBIT, "sending rate [Mbit/s]")
    p.bottleneck_rate(ax, run)
    ax.set_title("sending rate (incl. retransmissions)", fontsize=9, loc="left")
    ax = left[3]
    if run.series["rtt_ms"].notna().any():
        p.per_flow(ax, run, "rtt_ms", 1.0, "RTT [ms]")
        ax.set_title("RTT per ACK, averaged per interval", fontsize=9, loc="left")
    else:  # a kernel run: TCP_INFO has the smoothed RTT only (docs/METRICS.md)
        p.per_flow(ax, run, "srtt_ms", 1.0, "smoothed RTT [ms]")
        ax.set_title("smoothed RTT (tcpi_rtt)", fontsize=9, loc="left")
    ax = left[4]
    p.per_flow(ax, run, "cwnd_pkts", 1.0, "cwnd [packets]")
    ax.set_title("congestion window", fontsize=9, loc="left")
    ax = left[5]
    p.per_flow(ax, run, "inflight_pkts", 1.0, "inflight [packets]")
    p.total_line(ax, run, "inflight_pkts", 1.0, "total inflight")
    b = run.spec.bottleneck
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
    ax.set_title("inflight vs BDP", fontsize=9, loc="left")
    ax = left[6]
    p.per_flow(ax, run, "pacing_rate_bps", p.MBIT, "pacing rate [Mbit/s]")
    ax.set_title("pacing rate", fontsize=9, loc="left")

    p.cc_estimate(
        right[0],
        run,
        ("btlbw", "bw"),
        "bw estimate [Mbit/s]",
        "no algorithm reports a bandwidth estimate",
        with_rate=True,
    )
    right[0].set_title("BBR bottleneck bandwidth estimate", fontsize=9, loc="left")
    p.cc_estimate(
        right[1], run, ("min_rtt", "rtprop"), "min_rtt [ms]", "no algorithm reports min_rtt"
    )
    right[1].set_title("BBR min_rtt estimate", fontsize=9, loc="left")
    p.modes(right[2], run)
    right[2].set_title("algorithm mode / state", fontsize=9, loc="left")
    ax = right[3]
    if not run.queue.empty and "backlog_pkts" in run.queue:
        ax.plot(run.queue["time_s"], run.queue["backlog_pkts"], color="black", lw=0.9)
        if b.buffer.unit == "pkt":
            ax.axhline(
                float(b.buffer.value), color="0.6", ls=":", lw=1.0, label=f"buffer {b.buffer}"
            )
            ax.legend(loc="upper right", fontsize=7)
    else:
        p._no_data(ax, "not recorded")
    ax.set_ylabel("backlog [packets]")
    with_sojourn = p.sojourn(ax, run)
    ax.set_title(
        "bottleneck queue backlog" + (" and qdisc sojourn time (blue)" if with_sojourn else ""),
        fontsize=9,
        loc="left",
    )
    p.drops_and_retransmissions(right[4], run)
    right[4].set_title(
        "drops at the bottleneck and retransmissions per flow", fontsize=9, loc="left"
    )
    p.fairness(right[5], run)
    right[5].set_title("fairness over time (active flows)", fontsize=9, loc="left")
    _summary_text(right[6], result)

    for ax in time_axes:
        ax.grid(True, lw=0.3, alpha=0.6)
        ax.set_xlim(0, run.duration_s)
        ax.tick_params(labelsize=8)
        ax.yaxis.label.set_size(9)
    for ax in (left[-1], right[5]):
        ax.set_xlabel("time [s]")
    handles = [Line2D([], [], color=c, lw=2) for c in p.flow_colors(len(run.flows))]
    labels = [p.flow_label(run, fid) for fid in run.flows.index]
    fig.suptitle(_title(run), fontsize=11, y=0.995)
    fig.legend(
        handles[:20],
        labels[:20],
        loc="upper center",
        ncol=min(6, max(1, len(labels))),
        fontsize=8,
        bbox_to_anchor=(0.5, 0.985),
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def save_report(result: Any, directory: str | Path) -> None:
    """Write report.png and report.pdf into ``directory`` (deterministic bytes: no dates)."""
    d = Path(directory)
    fig = draw_report(result)
    try:
        fig.savefig(d / "report.png", dpi=90, metadata={"Software": None})
        fig.savefig(
            d / "report.pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None}
        )
    finally:
        plt.close(fig)
