"""Latency probes in the reports ([[probes]], tcplab.specs.probes): each probe's RTT over
time on the RTT panel, labelled "probe (ping) RTT", in report.png and report.html, and
its statistics (summary.json ``probes``) in the numbers table and the metrics table.

A probe's points are its echoes, one per probe that came back, at the request's send
time; a lost probe leaves a gap (its loss is counted in the statistics). Runs read back
from a directory take them from probes.parquet and summary.json.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

LABEL = "probe (ping) RTT"
# One black-and-grey family for the probes, apart from the flows' colours.
COLORS = ["#000000", "#555555", "#999999"]
STAT_KEYS = ("median_ms", "p95_ms", "p99_ms")


def rtts(run: Any) -> pd.DataFrame:
    """The run's probe echoes (PROBE_COLUMNS), empty without probes."""
    table = getattr(run, "probe_rtts", None)
    if table is None or not isinstance(table, pd.DataFrame):
        return pd.DataFrame(columns=["probe", "name", "seq", "time_s", "rtt_ms"])
    return table


def stats(result: Any) -> list[dict[str, Any]]:
    """summary.json's per-probe entries (empty without probes)."""
    doc = getattr(result, "summary_json", None) or {}
    return [s for s in doc.get("probes", []) if isinstance(s, dict)]


def _ms(v: Any) -> str:
    return f"{v:.1f}" if isinstance(v, (int, float)) and np.isfinite(v) else "n/a"


def number_lines(result: Any) -> list[str]:
    """Lines for report.png's numbers table: per probe its name, then its RTT
    median/p95/p99 and losses (two lines, so the block keeps its column's width)."""
    out = []
    for s in stats(result):
        out.append(f"{LABEL} {str(s.get('name', ''))[:24]}:")
        out.append(
            f"  median {_ms(s.get('median_ms'))}  p95 {_ms(s.get('p95_ms'))}"
            f"  p99 {_ms(s.get('p99_ms'))} ms, lost {s.get('lost', 0)}/{s.get('count', 0)}"
        )
    return out


def draw(ax: Any, run: Any) -> list[Any]:
    """Each probe's RTT on ``ax`` (a time axis in s, RTT in ms); the lines drawn, for a
    legend of their own (the flows' styles have theirs)."""
    table = rtts(run)
    drawn = []
    for k, (name, g) in enumerate(table.groupby("name", sort=False)):
        t = g["time_s"].to_numpy(dtype=float)
        y = g["rtt_ms"].to_numpy(dtype=float)
        if not len(t):
            continue
        (line,) = ax.plot(
            t,
            y,
            ls="none",
            marker=".",
            ms=2.5,
            color=COLORS[k % len(COLORS)],
            label=f"{LABEL}: {name}",
            zorder=5,
        )
        drawn.append(line)
    return drawn


def html_traces(run: Any, values: Any) -> list[dict[str, Any]]:
    """Plotly traces of each probe's RTT (``values`` rounds an array for JSON)."""
    out = []
    for k, (name, g) in enumerate(rtts(run).groupby("name", sort=False)):
        out.append(
            {
                "type": "scatter",
                "x": values(g["time_s"].to_numpy(dtype=float)),
                "y": values(g["rtt_ms"].to_numpy(dtype=float)),
                "mode": "markers",
                "marker": {"size": 3, "color": COLORS[k % len(COLORS)]},
                "name": f"{LABEL}: {name}",
                "legendgroup": f"probe-{name}",
            }
        )
    return out


def html_rows(result: Any) -> list[tuple[str, ...]]:
    """Rows of report.html's probe table: name, interval, size, sent, lost, RTT stats."""
    rows = []
    for s in stats(result):
        rows.append(
            (
                str(s.get("name", "")),
                f"{s.get('interval_ms', 0):g} ms",
                f"{s.get('size_bytes', 0)} B",
                str(s.get("count", 0)),
                str(s.get("lost", 0)),
                *(_ms(s.get(k)) for k in ("min_ms", *STAT_KEYS, "max_ms")),
            )
        )
    return rows
