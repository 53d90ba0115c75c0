"""Panel functions for the run report: each draws one quantity over time on a given
axis, from a :class:`~tcplab.rundata.RunData`. Rates are shown in Mbit/s, times in s."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcplab.analysis import metrics as m
from tcplab.analysis.rundata import RunData  # noqa: E402
from tcplab.analysis.summary import mode_column  # noqa: E402

MBIT = 1e6


def flow_colors(n: int) -> list[Any]:
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def flow_label(run: RunData, fid: int) -> str:
    row = run.flows.loc[fid]
    rtt = row.get("rtt_ms", float("nan"))
    rtt_s = f", {rtt:g} ms" if rtt == rtt else ""
    return f"flow {fid} ({row['cc']}{rtt_s})"


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
) -> bool:
    """One line per flow of series ``column`` divided by ``scale``. Returns whether drawn."""
    wide = run.wide(column)
    ax.set_ylabel(ylabel)
    if wide.empty or not wide.notna().any().any():
        _no_data(ax, missing)
        return False
    colors = flow_colors(len(run.flows))
    for j, fid in enumerate(run.flows.index):
        if fid in wide.columns:
            y = pd.to_numeric(wide[fid], errors="coerce") / scale
            kw = dict(color=colors[j % len(colors)], lw=1.0)
            if step:
                ax.step(wide.index, y, where="pre", **kw)
            else:
                ax.plot(wide.index, y, **kw)
    return True


def total_line(ax: Any, run: RunData, column: str, scale: float, label: str = "total") -> None:
    wide = run.wide(column)
    if not wide.empty:
        ax.plot(
            wide.index,
            wide.fillna(0).sum(axis=1) / scale,
            color="black",
            lw=0.8,
            ls="--",
            label=label,
        )


def bottleneck_rate(ax: Any, run: RunData) -> None:
    """The bottleneck rate as a grey step line (changes with events)."""
    t = np.array([0.0] + [e[0] for e in run.bottleneck_events()] + [run.duration_s])
    r = m.rate_at(t, run.spec.bottleneck.rate, run.bottleneck_events()) / MBIT
    ax.step(t, r, where="post", color="0.6", lw=1.0, label="bottleneck rate")


def find_cc_column(run: RunData, *needles: str) -> str | None:
    """The first numeric ``cc_*`` column whose name contains one of ``needles``."""
    for needle in needles:
        for c in run.series.columns:
            if c.startswith("cc_") and needle in c and pd.api.types.is_numeric_dtype(run.series[c]):
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
    sc, unit = unit_scale(col)
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


def unit_scale(column: str) -> tuple[float, str]:
    """Divisor and axis unit for a column from its name's unit suffix."""
    if column.endswith("_bps"):
        return MBIT, "Mbit/s"
    if column.endswith("_us"):
        return 1e3, "ms"
    if column.endswith("_ns"):
        return 1e6, "ms"
    if column.endswith("_ms"):
        return 1.0, "ms"
    if column.endswith("_pkts"):
        return 1.0, "packets"
    return 1.0, ""


def modes(ax: Any, run: RunData) -> None:
    """The algorithm's mode/state label per flow as a categorical step plot."""
    col = mode_column(run.series) or ("ca_state" if "ca_state" in run.series.columns else None)
    ax.set_ylabel("mode")
    if col is None:
        _no_data(ax, "no algorithm reports a mode")
        return
    labels = [x for x in pd.unique(run.series[col].dropna().astype(str)) if x]
    order = {lab: i for i, lab in enumerate(labels)}
    colors = flow_colors(len(run.flows))
    n = max(1, len(run.flows))
    for j, fid in enumerate(run.flows.index):
        sel = run.series[run.series["flow"] == fid]
        row = run.flows.loc[fid]
        sel = sel[
            (sel["time_s"] > float(row["start_s"]))
            & (sel["time_s"] <= float(row["stop_s"]) + run.interval_s)
        ]
        y = (
            sel[col]
            .astype("string")
            .map(lambda v: order.get(str(v), np.nan) if v is not pd.NA else np.nan)
        )
        off = (j - (n - 1) / 2) * min(
            0.08, 0.6 / n
        )  # small offset so overlapping flows stay visible
        ax.step(
            sel["time_s"],
            pd.to_numeric(y, errors="coerce") + off,
            where="pre",
            color=colors[j],
            lw=1.0,
        )
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.5, len(labels) - 0.5)


def drops_and_retransmissions(ax: Any, run: RunData) -> None:
    """Bottleneck drops (bars) and each flow's retransmissions per interval."""
    ax.set_ylabel("packets / interval")
    drawn = False
    if "drops" in run.queue.columns and not run.queue.empty:
        d = pd.to_numeric(run.queue["drops"], errors="coerce").fillna(0)  # per interval
        ax.fill_between(run.queue["time_s"], d, step="pre", color="0.75", label="bottleneck drops")
        drawn = True
    if "marks" in run.queue.columns and not run.queue.empty:
        # CE marks by the bottleneck's qdisc (recorded only with an aqm).
        mk = pd.to_numeric(run.queue["marks"], errors="coerce").fillna(0)
        ax.step(
            run.queue["time_s"],
            mk,
            where="pre",
            color="tab:orange",
            lw=0.9,
            label="bottleneck CE marks",
        )
    wide = run.wide("retransmits")
    colors = flow_colors(len(run.flows))
    for j, fid in enumerate(run.flows.index):
        if not wide.empty and fid in wide.columns:
            ax.step(
                wide.index,
                pd.to_numeric(wide[fid], errors="coerce"),
                where="pre",
                color=colors[j],
                lw=0.9,
            )
            drawn = True
    if not drawn:
        _no_data(ax, "not recorded")
    else:
        ax.legend(loc="upper right", fontsize=7)


def fairness(ax: Any, run: RunData) -> None:
    """Jain's index F of the active flows' per-interval throughput."""
    thr = run.wide("throughput_bps")
    ax.set_ylabel("Jain index F")
    if thr.empty or len(run.flows) < 2:
        _no_data(ax, "needs two or more flows")
        return
    f = m.jain_over_time(thr, run.flows)
    ax.plot(f.index, f, color="black", lw=1.0)
    ax.axhline(0.95, color="0.6", lw=0.8, ls=":", label="0.95")
    ax.set_ylim(max(0.0, 1.0 / len(run.flows) - 0.05), 1.02)
    ax.legend(loc="lower right", fontsize=7)


def sojourn(ax: Any, run: RunData) -> bool:
    """The qdisc's mean sojourn time per interval on a twin axis; False if not recorded."""
    if run.queue.empty or "sojourn_ms" not in run.queue.columns:
        return False
    tw = ax.twinx()
    tw.plot(
        run.queue["time_s"],
        pd.to_numeric(run.queue["sojourn_ms"], errors="coerce"),
        color="tab:blue",
        lw=0.8,
    )
    tw.set_ylabel("sojourn [ms]", color="tab:blue", fontsize=9)
    tw.tick_params(labelsize=8, colors="tab:blue")
    return True
