"""A sweep's table (one row per finished run: swept values, seed, digest, aggregate
metrics, each algorithm's share; table.csv and table.parquet) and its summary plots and
report.html (``plan``: runs/sweep.py Plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.storage.directory import is_run_dir


def build_table(out: Path, plan: Any) -> pd.DataFrame:
    """One row per finished run: swept values, seed, digest, aggregate metrics and each
    algorithm's share of the throughput (``share[cc]``)."""
    rows = []
    for job in plan.jobs:
        d = Path(out) / "runs" / job.digest
        if not is_run_dir(d):
            continue
        summ = json.loads((d / "summary.json").read_text())
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
        rows.append(row)
    table = pd.DataFrame(rows)
    table.to_csv(Path(out) / "table.csv", index=False, float_format="%.9g")
    table.to_parquet(Path(out) / "table.parquet", index=False)
    return table


def write_summary(out: Path, plan: Any, table: pd.DataFrame) -> list[Path]:
    """Summary plots: for each swept parameter, the algorithms' shares and each metric's
    mean over seeds with 95 % confidence intervals, one line per combination of the other
    parameters (report/sweep_plots.py); and the interactive report.html (report/html.py)."""
    # Here, not at the top: matplotlib's import would slow every command that draws nothing.
    from tcplab.report.html import write_sweep_html
    from tcplab.report.sweep_plots import plot_axis

    paths = []
    for axis in plan.axes:
        paths.append(plot_axis(Path(out), plan, table, axis))
    paths.append(write_sweep_html(Path(out), plan, table))
    return paths
