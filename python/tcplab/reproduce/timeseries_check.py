"""Load-time checks of an entry's ``[catalogue.timeseries]`` (catalogue.py): it must name
one grid point, columns the runs record, a seed the sweep runs, and paper marks of one of
the three forms, inside the run. A typo would otherwise draw an empty panel, or a mark
nowhere, without a word.

The forms of a mark (``PaperMark``): ``t = [a, b]`` with ``y`` (a level over a span),
``y`` alone (a level over the whole run), ``t = a`` alone (an event at a time).
"""

from __future__ import annotations

import re
from typing import Any

from tcplab.analysis.rundata import QUEUE_COLUMNS, SERIES_FIRST
from tcplab.reproduce.prose import grid_of
from tcplab.specs.units import parse_time

SERIES_COLUMNS = tuple(c for c in SERIES_FIRST if c not in ("time_s", "flow", "cc", "ca_state"))
"""The per-flow numeric columns of series.parquet (analysis/rundata.py)."""

QUEUE_SERIES = tuple(c for c in QUEUE_COLUMNS if c != "time_s") + ("marks", "sojourn_ms")
"""The bottleneck's columns of queue.parquet; ``marks`` and ``sojourn_ms`` only with an aqm
that records them (a run without them draws the panel as "not recorded")."""

CC_COLUMN = re.compile(r"^cc_[a-z0-9_]+$")
"""An algorithm's own columns (``cc_min_rtt_ms``, ``cc_btlbw_bps``, ...): which exist
depends on the algorithm, so only the form is checked here. ``cc_mode`` (the state's
name) is drawn as the run report draws it, a step per flow between named levels."""


def known_column(name: str) -> bool:
    return name in SERIES_COLUMNS or name in QUEUE_SERIES or bool(CC_COLUMN.match(name))


def timeseries_problems(ts: Any, raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for every problem of ``ts`` (a ``Timeseries``) against the
    entry's spec ``raw``; empty when it can be drawn."""
    f = "catalogue.timeseries"
    sweep = raw.get("sweep") or {}
    grid = grid_of(raw)
    problems: list[tuple[str, str]] = []
    for k, v in ts.at.items():
        if k not in grid:
            problems.append(
                (f"{f}.at", f"'{k}' is not swept; swept: {', '.join(grid) or 'nothing'}")
            )
        elif isinstance(v, list) or str(v) not in grid[k]:
            problems.append(
                (f"{f}.at", f"{k} = {v!r}: one value of the grid ({', '.join(grid[k])})")
            )
    loose = [k for k, v in grid.items() if len(set(v)) > 1 and k not in ts.at]
    if loose:
        problems.append(
            (
                f"{f}.at",
                f"names no value of {', '.join(loose)}: the series is one run, so `at` "
                "must fix every axis with several values",
            )
        )
    for j, c in enumerate(ts.columns):
        if not known_column(c):
            problems.append(
                (
                    f"{f}.columns[{j}]",
                    f"unknown column {c!r}; series: {', '.join(SERIES_COLUMNS)}; queue: "
                    f"{', '.join(QUEUE_SERIES)}; or an algorithm's cc_<name>",
                )
            )
    if ts.seed is not None:
        first = (raw.get("experiment") or {}).get("seed", 1)
        repeat = sweep.get("repeat", 1)
        if "experiment.seed" not in grid and isinstance(first, int) and isinstance(repeat, int):
            if not first <= ts.seed < first + repeat:
                problems.append(
                    (
                        f"{f}.seed",
                        f"seed {ts.seed} is not run: the sweep runs seeds {first} to "
                        f"{first + repeat - 1}",
                    )
                )
    duration = _duration_s(raw)
    if ts.time is not None:
        if len(ts.time) != 2 or not 0 <= ts.time[0] < ts.time[1]:
            problems.append((f"{f}.time", "must be [from, to] in seconds, 0 <= from < to"))
        elif duration is not None and ts.time[0] >= duration:
            problems.append(
                (f"{f}.time", f"starts at {ts.time[0]:g} s, after the run ends ({duration:g} s)")
            )
    for i, m in enumerate(ts.paper):
        problems += _mark_problems(f"{f}.paper[{i}]", m, ts.columns, duration)
    return problems


def _mark_problems(
    f: str, m: Any, columns: list[str], duration: float | None
) -> list[tuple[str, str]]:
    problems = []
    if m.column is None and m.y is not None and len(columns) > 1:
        problems.append((f"{f}.column", f"a level needs its panel: one of {', '.join(columns)}"))
    elif m.column is not None and m.column not in columns:
        problems.append(
            (f"{f}.column", f"{m.column!r} is not drawn; columns: {', '.join(columns)}")
        )
    forms = (
        "t = [a, b] with y (a level over a span), y alone (a level over the whole run) "
        "or t = a alone (an event)"
    )
    times: list[float] = []
    if isinstance(m.t, list):
        if len(m.t) != 2 or not m.t[0] < m.t[1]:
            problems.append((f"{f}.t", f"a span is [a, b] with a < b; a mark is {forms}"))
        elif m.y is None:
            problems.append((f"{f}.y", f"a span needs the level y; a mark is {forms}"))
        times = list(m.t)
    elif m.t is not None:
        if m.y is not None:
            problems.append((f"{f}.y", f"an event (t = a) has no level; a mark is {forms}"))
        times = [m.t]
    elif m.y is None:
        problems.append((f"{f}", f"gives neither t nor y; a mark is {forms}"))
    for x in times:
        if x < 0 or (duration is not None and x > duration):
            within = f"0 to {duration:g}" if duration is not None else "0 or later"
            problems.append((f"{f}.t", f"{x:g} s is outside the run ({within} s)"))
            break
    return problems


def _duration_s(raw: dict[str, Any]) -> float | None:
    """The entry's run duration in seconds, or None if it does not state one that parses
    (the spec's own validation reports that)."""
    text = (raw.get("experiment") or {}).get("duration")
    try:
        return parse_time(str(text)) / 1e9 if text is not None else None
    except (ValueError, TypeError):
        return None
