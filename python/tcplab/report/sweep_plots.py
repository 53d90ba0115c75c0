"""Summary plots of a sweep: a metric against a swept parameter, error bars over seeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def _key(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def plot_axis(out: Path, plan: Any, table: pd.DataFrame, axis: str) -> Path:
    """Write ``summary_<axis>.png``: one panel per metric; x = the values of ``axis`` in
    the order the sweep lists them; y = mean over repeats, error bar = standard deviation."""
    metrics = [m for m in plan.metrics if m in table.columns] if not table.empty else []
    n = max(1, len(metrics))
    ncols = min(3, n)
    nrows = (n + ncols - 1) // ncols
    fig, grid = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    flat = list(grid.flat)
    for ax in flat[n:]:
        ax.axis("off")
    axes = [flat[:n]]
    values = [_key(v) for v in plan.axes[axis]]
    others = [a for a in plan.axes if a != axis]
    for ax, metric in zip(axes[0], metrics):
        df = table.copy()
        df["_x"] = df[axis].map(_key)
        groups = df.groupby([df[o].map(_key) for o in others]) if others else [((), df)]
        for label, g in groups:
            stats = g.groupby("_x")[metric].agg(["mean", "std"]).reindex(values)
            x = np.arange(len(values))
            lab = ", ".join(
                f"{o}={v}" for o, v in zip(others, label if isinstance(label, tuple) else (label,))
            )
            ax.errorbar(
                x,
                stats["mean"],
                yerr=stats["std"].fillna(0),
                marker="o",
                capsize=3,
                lw=1.2,
                label=lab or None,
            )
        ax.set_xticks(np.arange(len(values)))
        ax.set_xticklabels(
            values, rotation=30 if max(len(v) for v in values) > 6 else 0, fontsize=8
        )
        ax.set_xlabel(axis)
        ax.set_ylabel(metric)
        ax.grid(True, lw=0.3)
        if others:
            ax.legend(fontsize=7)
    if not metrics:
        axes[0][0].text(0.5, 0.5, "no finished runs", ha="center", va="center")
    fig.suptitle(f"mean over {plan.repeat} seed(s); error bars: standard deviation", fontsize=9)
    fig.tight_layout()
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in axis)
    path = Path(out) / f"summary_{safe}.png"
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return path
