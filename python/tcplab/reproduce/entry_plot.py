"""One plot per catalogue entry in the paper's form: a metric against the paper's x axis
with the published points and the claims' targets, or, without an x axis, one run's time
series (the report's ``plots/NAME.png``; the paper-marked time series is
timeseries_plot.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.analysis.checks import metric_value
from tcplab.reproduce.runner import EntryResult, at_point
from tcplab.reproduce.timeseries_plot import run_dir

SERIES_NOTE = (
    "Time series: one of our runs against time; black dashed, the numbers the paper's text "
    "states there. The paper's curve itself is not available (text-only source) and is not drawn."
)


def plot_entry(res: EntryResult, path: Path) -> bool:
    """Draw ``res``'s figure into ``path``; False if the entry has nothing to draw."""
    from tcplab.report.plots import new_figure

    meta = res.entry.meta
    if not res.runs:
        return False
    if meta.x:
        metrics = meta.plot or sorted({c.metric for c in meta.claims if c.metric})
        fig = new_figure(figsize=(5 * len(metrics), 3.6))
        axes = fig.subplots(1, len(metrics), squeeze=False)
        xs = list(dict.fromkeys(str(r.point.get(meta.x)) for r in res.runs))
        others = sorted(
            {tuple((k, str(v)) for k, v in r.point.items() if k != meta.x) for r in res.runs}
        )
        for ax, metric in zip(axes[0], metrics):
            for other in others:
                means, sds = [], []
                for x in xs:
                    sel = at_point(res.runs, {meta.x: x, **dict(other)})
                    vals = pd.Series([metric_value(r.summary, metric) for r in sel], dtype=float)
                    means.append(vals.mean())
                    sds.append(vals.std() if len(vals) > 1 else 0.0)
                label = ", ".join(v for _, v in other) or "tcplab"
                ax.errorbar(range(len(xs)), means, yerr=sds, marker="o", capsize=3, label=label)
            for p in meta.published:
                if p.metric == metric and str(p.x) in xs:
                    ax.scatter(
                        [xs.index(str(p.x))], [p.y], marker="x", s=70, color="black", zorder=5
                    )
                    ax.annotate(
                        p.label,
                        (xs.index(str(p.x)), p.y),
                        textcoords="offset points",
                        xytext=(4, 4),
                        fontsize=7,
                    )
            _mark_claims(ax, meta, metric, xs)
            ax.set_xticks(range(len(xs)), xs, rotation=30, fontsize=8)
            ax.set_xlabel(meta.x)
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(
            f"{meta.figure}: {meta.title}\n(x: published values; grey: the claims' targets, "
            "a bar for 'within', a triangle for 'at least' / 'at most')",
            fontsize=9,
        )
    else:
        run = res.runs[0]
        series = pd.read_parquet(run_dir(res, run) / "series.parquet")
        col = meta.series
        if col not in series:
            return False
        fig = new_figure(figsize=(9, 3.6))
        ax = fig.subplots()
        for fid, g in series.groupby("flow"):
            flows = run.summary.get("flows", [])
            cc = flows[int(fid)]["cc"] if int(fid) < len(flows) else ""
            ax.plot(
                g["time_s"],
                g[col] / (1e6 if col.endswith("_bps") else 1),
                lw=0.8,
                label=f"flow {fid} {cc}",
            )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(col.replace("_bps", " (Mbit/s)"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=4)
        ax.set_title(f"{meta.figure}: {meta.title} (seed {run.seed})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def _mark_claims(ax: Any, meta: Any, metric: str, xs: list[str]) -> None:
    """The paper's numbers that the claims check, where the figure can show them: a claim
    on this metric with a plain target (no reference metric) at points of the x axis is
    drawn at its target, as a bar over its tolerance for ``within`` and a triangle
    pointing the way that passes for ``>=``/``<=``."""
    for k, c in enumerate(meta.claims, 1):
        if c.metric != metric or c.of or c.across or c.value is None or c.needs:
            continue
        at = c.at.get(meta.x)
        if at is None:
            continue
        for x in at if isinstance(at, list) else [at]:
            if str(x) not in xs:
                continue
            i = xs.index(str(x))
            if c.op == "within":
                ax.errorbar(
                    [i], [c.value], yerr=[c.tolerance], fmt="_", color="grey", capsize=6, zorder=4
                )
            else:
                marker = "^" if c.op in (">=", ">") else "v"
                ax.scatter([i], [c.value], marker=marker, s=45, color="grey", zorder=4)
            ax.annotate(
                f"claim {k}", (i, c.value), textcoords="offset points", xytext=(-28, -9), fontsize=6
            )
