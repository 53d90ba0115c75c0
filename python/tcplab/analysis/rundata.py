"""One run's data as DataFrames: the engine's raw result reshaped once into the tables
tcplab stores (``series``, ``queue``, ``flows``) and that metrics and plots read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tcplab.specs.model import Spec
from tcplab.specs.probes import names as probe_names

SERIES_FIRST = [
    "time_s",
    "flow",
    "cc",
    "cwnd_pkts",
    "inflight_pkts",
    "pacing_rate_bps",
    "rtt_ms",
    "srtt_ms",
    "throughput_bps",
    "goodput_bps",
    "sending_rate_bps",
    "delivery_rate_bps",
    "retransmits",
    "ca_state",
]
QUEUE_COLUMNS = ["time_s", "backlog_pkts", "backlog_bytes", "drops"]
# probes.parquet: one row per probe echo (tcplab.specs.probes).
PROBE_COLUMNS = ["probe", "name", "seq", "time_s", "rtt_ms"]


@dataclass
class RunData:
    """The tables of one run.

    Attributes
    ----------
    spec : Spec
        The resolved spec.
    series : DataFrame
        One row per (time_s, flow).
    queue : DataFrame
        Bottleneck queue samples.
    flows : DataFrame
        One row per flow (index ``flow``): cc, group, start_s, stop_s and the engine's
        exact counters.
    queues : list of dict
        The engine's per-queue counters.
    extra : dict
        Other scalars from the engine (events_processed, bottleneck_packets).
    """

    spec: Spec
    series: pd.DataFrame
    queue: pd.DataFrame
    flows: pd.DataFrame
    queues: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    # wide() results by column, for the series object they were computed from: the
    # summary, report.png and report.html ask for the same few columns about 25 times, and
    # each pandas pivot re-read all series rows. _grid_cache: where each row
    # goes in a wide table, shared by all numeric columns. The series is not changed in place
    # after construction; assigning a new one invalidates the cache.
    _wide_cache: dict[str, pd.DataFrame] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _wide_of: Any = field(default=None, init=False, repr=False, compare=False)
    _grid_cache: tuple[np.ndarray, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # flow_metrics' table for the (series, flows) it was computed from: summarize and the
    # Result (runs/execute.py) both ask for it. analysis.per_flow returns copies.
    _per_flow: tuple[Any, Any, pd.DataFrame] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # Captured links (``[experiment] pcap``): link name -> the engine's columns (pcap.py).
    captures: dict[str, Any] = field(default_factory=dict)
    # Constant-rate sources (specs/sources.py): the engine's per-source counters.
    sources: list[dict[str, Any]] = field(default_factory=list)
    # BPF programs' bpf_printk lines ({program, time_ns, text}, in time order) and how
    # many the programs did not keep; empty when no program printed.
    printk: list[dict[str, Any]] = field(default_factory=list)
    printk_dropped: int = 0
    # Every map of each loaded BPF program at the end of the run ([{program, maps}],
    # storage writes bpf_maps.json); empty when the run loaded none.
    bpf_maps: list[dict[str, Any]] = field(default_factory=list)
    # Latency probes (specs/probes.py): one row per echo (PROBE_COLUMNS), and the
    # engine's per-probe counters (empty when read back from a run directory: the
    # summary holds them).
    probe_rtts: pd.DataFrame = field(default_factory=lambda: empty_probe_rtts())
    probes: list[dict[str, Any]] = field(default_factory=list)
    # The links the engine ran (RunOutput.links, links.json of a stored run): per link
    # direction its name, rate_bps, delay_ns, loss, trace and events. Empty for a run
    # stored before the engine reported them; the metrics then read the spec (link()).
    links: list[dict[str, Any]] = field(default_factory=list)
    # Every write a driver made between the engine's steps (tcplab.gym's Simulation:
    # (time ns, flow, field, value)); storage writes actions.csv. Empty for an engine run.
    actions: Sequence[tuple[int, int, str, float]] = field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"<RunData {self.spec.experiment.name!r}: {len(self.flows)} flows, "
            f"series {len(self.series)} rows, queue {len(self.queue)} rows>"
        )

    @property
    def interval_s(self) -> float:
        return self.spec.experiment.sample_interval / 1e9

    @property
    def duration_s(self) -> float:
        return self.spec.experiment.duration / 1e9

    def wide(self, column: str) -> pd.DataFrame:
        """``column`` of the series with one column per flow, indexed by time_s; NaN where
        the flow is not running (before its start, more than one interval after its stop)."""
        if column not in self.series.columns or self.series.empty:
            return pd.DataFrame()
        if self._wide_of is not self.series:  # held, so an id cannot be reused
            self._wide_cache.clear()
            self._grid_cache = None
            self._wide_of = self.series
        if column not in self._wide_cache:
            self._wide_cache[column] = self._pivot(column)
        # A copy: callers may change theirs (fillna, assignments) without touching others'.
        return self._wide_cache[column].copy()

    def _pivot(self, column: str) -> pd.DataFrame:
        values = self.series[column]
        if not (pd.api.types.is_float_dtype(values) or pd.api.types.is_integer_dtype(values)):
            return self._pivot_pandas(column)
        rows, t_pos, f_pos, times, flows, idle = self._grid()
        out = np.full((len(times), len(flows)), np.nan)
        out[t_pos, f_pos] = values.to_numpy(dtype=float, na_value=np.nan)[rows]
        out[idle] = np.nan
        wide = pd.DataFrame(
            out, index=pd.Index(times, name="time_s"), columns=pd.Index(flows, name="flow")
        )
        if pd.api.types.is_integer_dtype(values) and not np.isnan(out).any():
            wide = wide.astype(values.dtype)  # as pandas' pivot keeps a full integer grid
        return wide

    def _grid(self) -> tuple[np.ndarray, ...]:
        """Where each series row goes in a wide table, computed once for all columns:
        the rows kept (the first of each (time_s, flow), as drop_duplicates keeps), their
        time and flow positions, the sorted times and flows, and the cells where a flow is
        not running (before its start, more than one interval after its stop)."""
        if self._grid_cache is None:
            keys = self.series[["time_s", "flow"]]
            rows = np.flatnonzero(~keys.duplicated().to_numpy())
            times, t_pos = np.unique(
                keys["time_s"].to_numpy(dtype=float)[rows], return_inverse=True
            )
            flows, f_pos = np.unique(keys["flow"].to_numpy()[rows], return_inverse=True)
            idle = np.zeros((len(times), len(flows)), dtype=bool)
            if not self.flows.empty and {"start_s", "stop_s"} <= set(self.flows.columns):
                # A flow missing from self.flows gets NaN bounds: never idle.
                known = self.flows.reindex(flows)
                start = known["start_s"].to_numpy(dtype=float)
                stop = known["stop_s"].to_numpy(dtype=float)
                t = times[:, None]
                idle = (t <= start) | (t > stop + self.interval_s)
            self._grid_cache = (rows, t_pos, f_pos, times, flows, idle)
        return self._grid_cache

    def _pivot_pandas(self, column: str) -> pd.DataFrame:
        """The wide table by pandas' pivot, for columns that are not numbers."""
        wide = self.series.drop_duplicates(["time_s", "flow"]).pivot(
            index="time_s", columns="flow", values=column
        )
        if not self.flows.empty and {"start_s", "stop_s"} <= set(self.flows.columns):
            t = wide.index.to_numpy(dtype=float)
            for fid in wide.columns:  # a flow has no values before it starts or after it stops
                if fid in self.flows.index:
                    row = self.flows.loc[fid]
                    idle = (t <= float(row["start_s"])) | (
                        t > float(row["stop_s"]) + self.interval_s
                    )
                    wide.loc[idle, fid] = np.nan
        return wide

    def link(self, name: str) -> dict[str, Any] | None:
        """The engine's report of link direction ``name`` (``bottleneck``, ``l2``,
        ``flow3.receiver_access``, ...): what it ran, not what the spec asked. None when
        the output has no ``links``: a run stored before the engine reported them
        (tcplab <= 0.10.0), whose metrics fall back to the spec, which lowering then
        passed to the engine unchanged."""
        return next((ln for ln in self.links if ln.get("name") == name), None)

    def link_rate(self, name: str, spec_rate: Any) -> Any:
        """The rate (bit/s) the metrics take for link ``name``: the engine's, else
        ``spec_rate`` (see :meth:`link`). A traced link's is the spec's TraceRate: the
        metrics count its delivery opportunities (metrics.trace_bits), which the output
        names (``trace``) but does not carry, up to millions of them per run."""
        ln = self.link(name)
        if ln is None or ln.get("trace") is not None:
            return spec_rate
        return int(ln["rate_bps"])

    def link_delay_ns(self, name: str, spec_delay: int) -> int:
        """The one-way delay (ns) link ``name`` started the run with: the engine's, else
        ``spec_delay`` (see :meth:`link`)."""
        ln = self.link(name)
        return int(ln["delay_ns"]) if ln is not None else int(spec_delay)

    def bottleneck_rate(self) -> Any:
        """The bottleneck's rate at the start of the run (:meth:`link_rate`)."""
        return self.link_rate("bottleneck", self.spec.bottleneck.rate)

    def bottleneck_events(self) -> list[tuple[float, float]]:
        """(time_s, rate_bps) of every bottleneck rate change: the engine's, else (a run
        stored before the engine reported its links, :meth:`link`) the spec's."""
        ln = self.link("bottleneck")
        if ln is None:
            return [(e.at / 1e9, float(e.rate)) for e in self.spec.events if e.rate is not None]
        return [
            (int(e["at_ns"]) / 1e9, float(e["rate_bps"]))
            for e in ln.get("events", [])
            if e.get("rate_bps") is not None
        ]


def flow_groups(spec: Spec) -> list[dict[str, Any]]:
    """One entry per expanded flow: its group index, cc, start and stop (s), rtt (ms)."""
    out = []
    for g, f in enumerate(spec.flows):
        stop = f.stop if f.stop is not None else spec.experiment.duration
        for k in range(f.count):
            out.append(
                {
                    "group": g,
                    "cc": f.cc,
                    "start_s": (f.start + k * f.stagger) / 1e9,
                    "stop_s": stop / 1e9,
                    "rtt_ms": (f.rtt or 0) / 1e6,
                }
            )
    return out


def empty_probe_rtts() -> pd.DataFrame:
    """A probes table without rows, its columns typed."""
    return pd.DataFrame(
        {
            "probe": pd.Series([], dtype="int64"),
            "name": pd.Series([], dtype="string"),
            "seq": pd.Series([], dtype="int64"),
            "time_s": pd.Series([], dtype="float64"),
            "rtt_ms": pd.Series([], dtype="float64"),
        }
    )


def probe_rtts(raw_probes: list[dict[str, Any]], names: list[str]) -> pd.DataFrame:
    """The engine's per-probe echoes as one table (PROBE_COLUMNS), by probe then send time."""
    frames = [empty_probe_rtts()]
    for i, p in enumerate(raw_probes):
        n = len(p.get("rtt_ns", []))
        frames.append(
            pd.DataFrame(
                {
                    "probe": np.full(n, i, dtype="int64"),
                    "name": pd.Series(
                        [names[i] if i < len(names) else f"probe{i}"] * n, dtype="string"
                    ),
                    "seq": np.asarray(p.get("seq", []), dtype="int64"),
                    "time_s": np.asarray(p.get("sent_ns", []), dtype="int64") / 1e9,
                    "rtt_ms": np.asarray(p.get("rtt_ns", []), dtype="int64") / 1e6,
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["probe", "time_s"], kind="stable").reset_index(drop=True)


def _frame(columns: dict[str, Any]) -> pd.DataFrame:
    data = {}
    for k, v in columns.items():
        arr = list(v) if not isinstance(v, np.ndarray) else v
        data[k] = arr
    return pd.DataFrame(data)


def from_engine(spec: Spec, raw: dict[str, Any]) -> RunData:
    """Reshape the engine's result dictionary (see ``crates/py``) into :class:`RunData`.

    Times in ns become ``time_s``; column order puts the common columns first and the
    algorithm's ``cc_*`` columns last, sorted.
    """
    groups = flow_groups(spec)
    for g, counters in zip(groups, raw.get("flows", [])):
        # The engine's name of a flow's algorithm: a BPF program's own (bpf_cubic), not
        # the spec's bpf:PATH.
        g["cc"] = counters.get("cc", g["cc"])
    series = _frame(raw.get("series", {}) or {})
    if "time_ns" in series.columns:
        series.insert(0, "time_s", series.pop("time_ns").astype("int64") / 1e9)
    if "flow" in series.columns:
        series["flow"] = series["flow"].astype("int64")
        series["cc"] = [groups[i]["cc"] if 0 <= i < len(groups) else "" for i in series["flow"]]
    first = [c for c in SERIES_FIRST if c in series.columns]
    rest = sorted(c for c in series.columns if c not in first)
    series = series[first + rest]
    for c in series.columns:  # label columns (cc_mode, ca_state as text) stay strings
        # object with pandas 2, the `str` dtype with pandas >= 3 (its default for text)
        if (
            series[c].dtype == object or pd.api.types.is_string_dtype(series[c].dtype)
        ) and c != "cc":
            try:
                series[c] = pd.to_numeric(series[c])
            except (ValueError, TypeError):
                # labels; the engine writes "" where a flow has no value (e.g. CUBIC's cc_mode)
                series[c] = series[c].astype("string").replace("", pd.NA)
    if "cc" in series.columns:
        series["cc"] = series["cc"].astype("string")
    if "time_s" in series.columns and "flow" in series.columns:
        series = series.sort_values(["time_s", "flow"], kind="stable").reset_index(drop=True)

    queue = _frame(raw.get("queue_series", {}) or {})
    if "time_ns" in queue.columns:
        queue.insert(0, "time_s", queue.pop("time_ns").astype("int64") / 1e9)
    queue = queue[
        [c for c in QUEUE_COLUMNS if c in queue.columns]
        + [c for c in queue.columns if c not in QUEUE_COLUMNS]
    ]

    rows = []
    for i, counters in enumerate(raw.get("flows", [])):
        g = groups[i] if i < len(groups) else {}
        row = {
            "flow": i,
            "group": g.get("group", -1),
            "cc": counters.get("cc", g.get("cc", "")),
            "start_s": g.get("start_s", counters.get("start_ns", 0) / 1e9),
            "stop_s": g.get("stop_s", (counters.get("stop_ns") or spec.experiment.duration) / 1e9),
            "rtt_ms": g.get("rtt_ms", float("nan")),
        }
        row.update(
            {k: v for k, v in counters.items() if k not in row and k not in ("start_ns", "stop_ns")}
        )
        rows.append(row)
    flows = (
        pd.DataFrame(rows).set_index("flow")
        if rows
        else pd.DataFrame(columns=["group", "cc", "start_s", "stop_s", "rtt_ms"])
    )
    extra = {
        k: raw[k] for k in ("bottleneck_packets", "events_processed", "capture_missed") if k in raw
    }
    return RunData(
        spec,
        series,
        queue,
        flows,
        list(raw.get("queues", [])),
        extra,
        dict(raw.get("captures") or {}),
        list(raw.get("sources") or []),
        list(raw.get("bpf_printk") or []),
        int(raw.get("bpf_printk_dropped") or 0),
        list(raw.get("bpf_maps") or []),
        probe_rtts(list(raw.get("probes") or []), probe_names(spec)),
        list(raw.get("probes") or []),
        list(raw.get("links") or []),
    )
