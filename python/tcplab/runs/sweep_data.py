"""A stored sweep as a notebook reads it: ``tcplab.load_sweep(DIR) -> SweepData``.

``SweepData.table`` has one row per (run, flow): the swept values, ``repeat``, ``seed``,
``digest``, ``run_dir``, then the flow's metrics from the run's summary.json (``flow`` and
``cc`` are ordinary columns, so ``table.groupby(["bottleneck.buffer", "cc"])`` works).
``SweepData.runs`` has one row per run with the aggregate metrics (the sweep's
``table.csv``, with the same swept-value columns). ``SweepData.series`` is every run's
time series stacked, keyed by the same columns (read on first use: a long sweep's series
take memory a table does not).

Swept values become numbers where they are quantities of one kind, so that a column can be
plotted or fitted as it is (the choice is documented in docs/ARCHITECTURE.md):

- plain numbers stay numbers;
- rates (``"10Mbps"``, ``"1gbit"``) become Mbit/s, times (``"40ms"``) ms, sizes in BDP
  (``"0.5bdp"``) BDP multiples, in packets packets, in bytes bytes, all through the spec's
  own unit parsers (:mod:`tcplab.specs.units`), so every spelling a spec accepts is read;
- anything else (algorithm names, a mix of ``"1bdp"`` and ``"100pkt"``, lists) stays as
  written (lists and tables as JSON text, as in table.csv).

``SweepData.units`` maps each swept path to the unit of its column (``None``: as written).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.errors import SpecError
from tcplab.specs.units import parse_rate, parse_size, parse_time
from tcplab.storage.directory import is_run_dir
from tcplab.storage.files import read_json


def numeric_axis(values: list[Any]) -> tuple[list[Any], str | None]:
    """The values of one swept path as numbers and their unit, or unchanged and None."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return list(values), ""
    if not all(isinstance(v, str) for v in values):
        return [json.dumps(v) if isinstance(v, (list, dict)) else v for v in values], None
    for parse, unit, scale in ((parse_rate, "Mbit/s", 1e6), (parse_time, "ms", 1e6)):
        try:
            return [parse(v) / scale for v in values], unit
        except ValueError:
            pass
    try:
        sizes = [parse_size(v) for v in values]
    except ValueError:
        return list(values), None
    kinds = {s.unit for s in sizes}
    if len(kinds) == 1 and "unlimited" not in kinds:
        unit = kinds.pop()
        return [float(s.value) for s in sizes], {"pkt": "packets"}.get(unit, unit)
    return list(values), None


@dataclass
class SweepData:
    """A stored sweep: its axes, per-(run, flow) and per-run tables, and series.

    Attributes
    ----------
    path : Path
        The sweep directory.
    axes : dict
        Swept path -> the values as written in the spec.
    units : dict
        Swept path -> the unit of its column in the tables ("" for plain numbers, None for
        values kept as written).
    table : DataFrame
        One row per (finished run, flow).
    runs : DataFrame
        One row per finished run: swept values, repeat, seed, digest, run_dir and the
        aggregate metrics.
    missing : int
        Planned runs not (yet) finished; a resumed ``tcplab sweep`` runs them.
    """

    path: Path
    axes: dict[str, list[Any]]
    units: dict[str, str | None]
    table: pd.DataFrame
    runs: pd.DataFrame
    missing: int
    _series: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def series(self) -> pd.DataFrame:
        """Every finished run's series.parquet, with the swept values, repeat and seed in
        front (read once, on first use)."""
        if self._series is None:
            keys = [*self.axes, "repeat", "seed"]
            parts = []
            for row in self.runs.itertuples(index=False):
                s = pd.read_parquet(self.path / row.run_dir / "series.parquet")
                front = dict(zip(self.runs.columns, row))
                for i, k in enumerate(keys):
                    s.insert(i, k, front[k])
                parts.append(s)
            self._series = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return self._series

    def __repr__(self) -> str:
        axes = ", ".join(f"{k} [{self.units[k]}]" if self.units.get(k) else k for k in self.axes)
        return (
            f"<SweepData {self.path}: {len(self.runs)} runs"
            + (f" ({self.missing} missing)" if self.missing else "")
            + f" over {axes or 'no axes'}; table {len(self.table)} rows (run x flow)>"
        )


def load_sweep(path: str | Path) -> SweepData:
    """Read a stored sweep directory (nothing is simulated).

    Raises
    ------
    SpecError
        If ``path`` is not a sweep directory (no sweep.json) or its files cannot be read.
    """
    d = Path(path)
    if not (d / "sweep.json").is_file():
        raise SpecError([("", "not a tcplab sweep directory (no sweep.json)")], str(d))
    try:
        plan = read_json(d / "sweep.json")
        axes: dict[str, list[Any]] = plan["axes"]
        converted = {k: numeric_axis(v) for k, v in axes.items()}
        lookup = {
            k: {json.dumps(a, sort_keys=True): b for a, b in zip(v, conv)}
            for (k, v), (conv, _) in zip(axes.items(), converted.values())
        }
        flow_rows, run_rows, missing = [], [], 0
        for r in plan["runs"]:
            run_dir = d / "runs" / r["digest"]
            if not is_run_dir(run_dir):
                missing += 1
                continue
            summary = read_json(run_dir / "summary.json")
            key: dict[str, Any] = {
                k: lookup[k][json.dumps(r["point"][k], sort_keys=True)] for k in axes
            }
            key.update(
                repeat=r["repeat"],
                seed=r["seed"],
                digest=r["digest"],
                run_dir=f"runs/{r['digest']}",
            )
            run_rows.append({**key, **summary.get("aggregate", {})})
            for f in summary.get("flows", []):
                flow_rows.append({**key, **f})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SpecError(
            [("", f"its stored results cannot be read ({type(exc).__name__}: {exc})")], str(d)
        ) from None
    return SweepData(
        d,
        axes,
        {k: unit for k, (_, unit) in converted.items()},
        pd.DataFrame(flow_rows),
        pd.DataFrame(run_rows),
        missing,
    )
