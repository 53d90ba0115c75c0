"""A sweep's table (one row per finished run: swept values, seed, digest, aggregate
metrics, each algorithm's share; table.csv and table.parquet) and its summary plots and
report.html (``plan``: runs/sweep.py Plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.analysis.checks import metric_value
from tcplab.storage.directory import is_run_dir
from tcplab.storage.files import read_json
from tcplab.storage.ownership import write_owned


def build_table(out: Path, plan: Any) -> pd.DataFrame:
    """One row per finished run: swept values, seed, digest, aggregate metrics and each
    algorithm's share of the throughput (``share[cc]``)."""
    rows = []
    for job in plan.jobs:
        d = Path(out) / "runs" / job.digest
        if not is_run_dir(d):
            continue
        summ = read_json(d / "summary.json")
        row: dict[str, Any] = {
            k: (v if not isinstance(v, (list, dict)) else json.dumps(v))
            for k, v in job.point.items()
        }
        row.update(
            {
                "repeat": job.repeat,
                "seed": job.seed,
                "digest": job.digest,
                "run_dir": f"runs/{job.digest}",
            }
        )
        row.update(summ.get("aggregate", {}))
        for cc, g in summ.get("by_cc", {}).items():
            row[f"share[{cc}]"] = g.get("share")
            row[f"share_minus_fair_share[{cc}]"] = g.get("share_minus_fair_share")
        for f in summ.get("flows", []):
            row[f"goodput_bps[flow{f['flow']}]"] = f.get("goodput_bps")
        for expr in plan.metrics:  # any metric expression the sweep asked for
            if expr not in row:
                row[expr] = metric_value(summ, expr)
        rows.append(row)
    return pd.DataFrame(rows)


TABLE_FILES = ("table.csv", "table.parquet")


def _write_table(tmp: Path, table: pd.DataFrame) -> list[str]:
    table.to_csv(tmp / "table.csv", index=False, float_format="%.9g")
    table.to_parquet(tmp / "table.parquet", index=False)
    return list(TABLE_FILES)


def write_table(out: Path, table: pd.DataFrame, remove_stale: bool = False) -> None:
    """table.csv and table.parquet alone (when drawing may fail: a full disk; or a sweep
    without plots, whose ``remove_stale`` drops summary plots an earlier sweep of the same
    directory drew, so that none is left older than the table)."""
    write_owned(
        Path(out),
        lambda tmp: _write_table(tmp, table),
        "-o",
        kind="sweep",
        remove_stale=remove_stale,
    )


def write_summary(out: Path, plan: Any, table: pd.DataFrame) -> list[Path]:
    """Summary plots: for each swept parameter, the algorithms' shares and each metric's
    mean over seeds with 95 % confidence intervals, one line per combination of the other
    parameters (report/sweep_plots.py), and the throughput-delay plot of the swept points
    (throughput_delay.png); and the interactive report.html (report/html.py);
    with table.csv and table.parquet. Returns their paths."""
    # Here, not at the top: matplotlib's import would slow every command that draws nothing.
    from tcplab.report.html import write_sweep_html
    from tcplab.report.sweep_plots import plot_axis, plot_throughput_delay

    def write(tmp: Path) -> list[str]:
        names = _write_table(tmp, table)
        names += [plot_axis(tmp, plan, table, axis).name for axis in plan.axes]
        names.append(plot_throughput_delay(tmp, plan, table).name)
        return names + [write_sweep_html(tmp, plan, table).name]

    # One rule for every writer (storage/ownership.py): only files this sweep wrote
    # before (outputs.json's digests) are replaced; a plot of an axis no longer swept goes.
    names = write_owned(Path(out), write, "-o", kind="sweep", remove_stale=True)
    return [Path(out) / name for name in names]
