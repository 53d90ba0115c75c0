"""Ticks and grid lines of the run report fixed before it is drawn.

matplotlib creates a Tick (two tick marks, a grid line and two labels) for every
position its locator returns, those just outside the view included, and it does so while
drawing; each Tick drawn cost about 1 ms of the PNG's CPU time (benches/RESULTS.md). Here
the positions and labels are taken once from the axis' own locator and formatter, kept
where matplotlib would draw them (within the view, with its relative tolerance of 1e-10),
and set as fixed ticks, so only drawn ticks are ever built. Grid lines are one line
collection per direction and axes instead of one line per tick. Positions, labels and the
grid's style are what ``ax.grid(True, lw=0.3, alpha=0.6)`` drew before.

Deviations: none in what is drawn. A figure whose limits a notebook changes afterwards
keeps the fixed ticks (``ax.yaxis.set_major_locator(...)`` restores automatic ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.collections import LineCollection

# matplotlib's transforms._interval_contains_close: a tick within this fraction of the
# view's span outside it is still drawn.
IN_VIEW_RTOL = 1e-10


def grid_style() -> dict[str, Any]:
    """The grid lines' look: ``ax.grid(True, lw=0.3, alpha=0.6)`` with rcParams' colour
    and style, below the data lines as matplotlib's grid is (zorder 1.5, rcParams
    axes.axisbelow = 'line')."""
    return {
        "linewidths": 0.3,
        "alpha": 0.6,
        "colors": mpl.rcParams["grid.color"],
        "linestyles": mpl.rcParams["grid.linestyle"],
        "zorder": 1.5,
    }


def freeze(axis: Any) -> list[float]:
    """Fix ``axis``' ticks at the positions its locator gives within the view, labelled
    as its formatter labels them among all the locator's positions (so the labels are
    the ones matplotlib would draw); return the positions. Call it after everything is
    plotted and the limits are set: it settles the view's autoscaling."""
    lo, hi = sorted(axis.get_view_interval())
    locs = np.asarray(axis.get_major_locator()(), dtype=float)
    labels = axis.get_major_formatter().format_ticks(locs)
    tol = (hi - lo) * IN_VIEW_RTOL
    keep = (locs >= lo - tol) & (locs <= hi + tol)
    kept = [float(x) for x in locs[keep]]
    axis.set_ticks(kept, labels=[lab for lab, k in zip(labels, keep) if k])
    return kept


def grid(ax: Any, xs: Sequence[float] = (), ys: Sequence[float] = ()) -> None:
    """Vertical grid lines at data x ``xs`` and horizontal ones at data y ``ys`` across
    ``ax``, one line collection per direction."""
    if len(xs):
        ax.add_collection(
            LineCollection(
                [[(x, 0), (x, 1)] for x in xs], transform=ax.get_xaxis_transform(), **grid_style()
            ),
            autolim=False,  # axes-fraction y: must not widen the data limits
        )
    if len(ys):
        ax.add_collection(
            LineCollection(
                [[(0, y), (1, y)] for y in ys], transform=ax.get_yaxis_transform(), **grid_style()
            ),
            autolim=False,
        )
