"""Per-flow metrics of summary.json computed over all flows at once.

The series is one row per (time, flow), sorted by time. Reading one flow's rows with a
boolean mask and pandas per flow (``dropna``, ``to_numeric``, a mode scan) cost about
5 ms a flow: 9.5 s for a 1000-flow run whose simulation took 4.8 s. Here each
column is converted once, the rows are ordered by flow once (a stable sort, so each
flow's rows keep their time order), and each flow is a contiguous slice of those arrays:
the per-flow work is a few numpy calls on a slice.

The values are those of the per-flow pandas code to the last bit, and
tests/analysis/test_per_flow.py holds them to it (against that code, kept there, and against
stored summaries): every mean is numpy's pairwise sum over the same values in the same
order as pandas took them. That is why the slices are not reduced with one
``np.add.reduceat`` (a sequential sum, whose last digits differ), and why a mean that
pandas took over a column with NaN in it (``Series.mean``, which adds zeros in their
place) is taken the same way here, apart from a mean over ``dropna()`` (which adds the
remaining values only).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from tcplab.analysis import metrics as m

BBR_MODES = ("STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT")
MODE_COLUMNS = ("cc_mode", "cc_state", "cc_bbr_mode")
BW_ESTIMATE_COLUMNS = ("cc_btlbw_bps", "cc_bw_bps")
"""The algorithm's bandwidth estimate in the series: BBR's max-filtered BtlBw (``cc_btlbw_bps``,
tcp_bbr.c bbr_max_bw) where it is recorded, else ``cc_bw_bps`` (the kernel backend's
tcp_bbr_info.bbr_bw_lo/hi). A kernel run has ``cc_btlbw_bps`` too, all null (it keeps every
column the simulator writes for the spec), so the choice is the first column with a value."""


def mode_column(series: pd.DataFrame) -> str | None:
    """The label column holding an algorithm's mode/state (e.g. BBR's STARTUP ...)."""
    return next((c for c in MODE_COLUMNS if c in series.columns), None)


def bw_estimate_column(series: pd.DataFrame) -> str | None:
    present = [c for c in BW_ESTIMATE_COLUMNS if c in series.columns]
    return next((c for c in present if series[c].notna().any()), present[0] if present else None)


def _numbers(col: pd.Series) -> np.ndarray:
    """A column as numbers (``pd.to_numeric(errors="coerce")``), keeping an integer
    column's integers: the mean of int64 values is summed as pandas sums them."""
    v = pd.to_numeric(col, errors="coerce")
    if v.dtype.kind in "iuf" and isinstance(v.dtype, np.dtype):
        return v.to_numpy()
    return v.to_numpy(dtype=float, na_value=np.nan)


def _is(col: pd.Series, label: str) -> np.ndarray:
    """Where a label column equals ``label`` (missing: False)."""
    return (col == label).fillna(False).to_numpy(dtype=bool)


def mean_dropna(a: np.ndarray) -> float:
    """``pd.to_numeric(x).dropna().mean()`` of one flow's values: the mean of the values
    present, NaN if none."""
    if a.dtype.kind == "f":
        a = a[~np.isnan(a)]
    return float(np.mean(a)) if a.size else math.nan


def mean_skipna(a: np.ndarray) -> float:
    """``Series.mean()`` of a float column with NaN in it: pandas sums the column with
    zeros in place of NaN and divides by the count of values present."""
    if a.dtype.kind != "f":
        return float(np.mean(a)) if a.size else math.nan
    missing = np.isnan(a)
    n = a.size - int(missing.sum())
    if n == 0:
        return math.nan
    if missing.any():
        a = np.where(missing, 0.0, a)
    return float(a.sum() / n)


def percentiles(values: np.ndarray, group: np.ndarray, n_groups: int, q: float) -> np.ndarray:
    """``np.percentile(x, q)`` (its default, linear method) of each group's values, NaN
    values left out, NaN for a group without values: the per-interval RTT's 95th
    percentile of every flow at once (one sort instead of 1000 calls of 50 us).

    The steps and their floating-point operations are numpy's (``_quantile``,
    ``_get_indexes``, ``_lerp`` in numpy/lib/_function_base_impl.py): the virtual index
    ``(n - 1) * q / 100``, its floor and the next index (both the last value when the
    index reaches it), ``gamma`` = index - floor, then ``a + (b - a) * gamma``, or
    ``b - (b - a) * (1 - gamma)`` where ``gamma >= 0.5``; tests/analysis/test_per_flow.py holds
    the results to np.percentile's bit for bit."""
    keep = ~np.isnan(values)
    v, g = values[keep], group[keep]
    order = np.lexsort((v, g))
    v = v[order]
    n = np.bincount(g, minlength=n_groups)
    first = np.concatenate(([0], np.cumsum(n)[:-1]))
    out = np.full(n_groups, np.nan)
    has = n > 0
    n, first = n[has], first[has]
    virtual = (n - 1) * np.true_divide(q, 100)
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    gamma = virtual - prev
    last = first + n - 1
    a = v[np.where(prev < 0, last, first + prev.astype(np.intp))]
    b = v[np.where(nxt < 0, last, first + nxt.astype(np.intp))]
    diff = b - a
    lerp = a + diff * gamma
    high = gamma >= 0.5
    lerp[high] = (b - diff * (1 - gamma))[high]
    out[has] = lerp
    return out


class Slices:
    """A series' rows grouped by flow: the columns in flow order (a stable sort, so each
    flow's rows keep their series order), and ``bounds(fid)`` the slice of flow
    ``fid``'s rows in them: the rows ``series[series["flow"] == fid]`` selects."""

    def __init__(self, series: pd.DataFrame) -> None:
        self.series = series
        flow = (
            series["flow"].to_numpy()
            if "flow" in series
            else np.zeros(len(series), dtype=np.int64)  # one group: every row
        )
        self.order = np.argsort(flow, kind="stable")
        self.sorted_flow = flow[self.order]
        self._cols: dict[str, np.ndarray] = {}
        self._labels: dict[tuple[str, str], np.ndarray] = {}

    def percentile(self, name: str, fids: Any, q: float) -> np.ndarray:
        """:func:`percentiles` of a column for each of ``fids`` (NaN for one without rows)."""
        ids = np.asarray(fids)
        if ids.size == 0:
            return np.zeros(0)
        by_id = np.argsort(ids, kind="stable")
        pos = np.minimum(np.searchsorted(ids[by_id], self.sorted_flow), ids.size - 1)
        known = ids[by_id][pos] == self.sorted_flow
        values = self.column(name).astype(float)[known]
        out = np.empty(ids.size)
        out[by_id] = percentiles(values, pos[known], ids.size, q)
        return out

    def bounds(self, fid: Any) -> tuple[int, int]:
        lo = int(np.searchsorted(self.sorted_flow, fid, side="left"))
        hi = int(np.searchsorted(self.sorted_flow, fid, side="right"))
        return lo, hi

    def column(self, name: str) -> np.ndarray:
        """A numeric column in flow order."""
        if name not in self._cols:
            self._cols[name] = _numbers(self.series[name])[self.order]
        return self._cols[name]

    def label(self, name: str, value: str) -> np.ndarray:
        """Where a label column equals ``value``, in flow order."""
        key = (name, value)
        if key not in self._labels:
            self._labels[key] = _is(self.series[name], value)[self.order]
        return self._labels[key]

    def present(self, name: str) -> np.ndarray:
        key = (name, "")
        if key not in self._labels:
            self._labels[key] = self.series[name].notna().to_numpy(dtype=bool)[self.order]
        return self._labels[key]


class FlowModes:
    """One flow's mode labels (the mode column without its missing values), for the
    BBR-family metrics; ``None`` fields when the series has no mode column."""

    def __init__(self, s: Slices, col: str | None, lo: int, hi: int) -> None:
        self.col = col
        if col is None:
            return
        self.present = s.present(col)[lo:hi]
        self.any = bool(self.present.any())
        self._s, self._lo, self._hi = s, lo, hi

    def is_mode(self, mode: str) -> np.ndarray:
        """Over the flow's rows (missing mode: False)."""
        return self._s.label(self.col, mode)[self._lo : self._hi]

    def seq(self, mode: str) -> np.ndarray:
        """Over the flow's mode samples only (missing ones left out)."""
        return self.is_mode(mode)[self.present]


def startup_exit_s(fm: FlowModes, t: np.ndarray, start_s: float) -> float:
    """Time from the flow's start to the first sample outside STARTUP (a BBR-family flow's
    start-up length, BBR' Sec. 4.1 Fig. 3; resolution: the sample interval)."""
    if fm.col is None or not fm.any:
        return math.nan
    startup = fm.is_mode("STARTUP")
    if not (startup & fm.present).any():
        return math.nan
    after = t[fm.present & ~startup]
    after = after[after > start_s]  # a kernel flow has no mode before it connects
    return float(after[0]) - start_s if after.size else math.nan


def mode_entries(fm: FlowModes, mode: str) -> float:
    """How many times the flow entered ``mode`` (from consecutive samples; a phase shorter
    than the sample interval can be missed); NaN for a flow without BBR's modes."""
    if fm.col is None or not any(fm.seq(x).any() for x in BBR_MODES):
        return math.nan  # not a BBR-family flow
    is_mode = fm.seq(mode)
    return float(np.sum(is_mode[1:] & ~is_mode[:-1]) + int(is_mode[0]))


def mean_mode_duration_s(fm: FlowModes, mode: str, interval_s: float) -> float:
    """Mean length of the flow's phases in ``mode``: consecutive samples in it, times the
    sample interval (TUM Sec. 4.3.1, Fig. 7c: a Probe RTT phase lasts 200 ms + one RTT or
    more; resolution: one sample interval, so sample finely). NaN if never in ``mode``."""
    if fm.col is None or not fm.any:
        return math.nan
    is_mode = fm.seq(mode)
    if not is_mode.any():
        return math.nan
    starts = int(np.sum(is_mode[1:] & ~is_mode[:-1]) + int(is_mode[0]))
    return float(is_mode.sum()) * interval_s / starts


def mean_bw_estimate_bps(fm: FlowModes, estimate: np.ndarray | None) -> float:
    """Mean of the flow's bandwidth estimate over its PROBE_BW samples: the steady-state
    estimate BBR' Sec. 4.1 (Fig. 3: "about 9.7 Mb/s" on a 10 Mb/s link) reads. Samples in
    STARTUP, DRAIN and PROBE_RTT are left out (the estimate is still growing or unchanged)."""
    if estimate is None or fm.col is None:
        return math.nan
    return mean_dropna(estimate[fm.present & fm.is_mode("PROBE_BW")])


def mean_probe_bw_cycle_s(fm: FlowModes, gain: np.ndarray | None, t: np.ndarray) -> float:
    """Mean time between the starts of successive probing phases (pacing gain above 1) in
    PROBE_BW: the gain cycle's period, 8 x min_rtt in tcp_bbr.c (bbr_pacing_gain[],
    CYCLE_LEN = 8; BBR' Sec. 4.2, Fig. 4: "about 320 (8 x 40 = 320) milliseconds apart").
    Only starts with PROBE_BW in between count (a PROBE_RTT or STARTUP restarts the count).
    NaN for a flow without a recorded mode and pacing gain, or with fewer than two starts."""
    if fm.col is None or gain is None or not fm.any:
        return math.nan
    in_bw = fm.is_mode("PROBE_BW")
    with np.errstate(invalid="ignore"):
        probing = in_bw & (gain > 1.0)
    rose = probing.copy()
    rose[1:] &= ~probing[:-1]
    starts = np.flatnonzero(rose)
    if starts.size < 2:
        return math.nan
    stretch = np.cumsum(~in_bw)  # a sample outside PROBE_BW starts a new stretch
    same = stretch[starts[1:]] == stretch[starts[:-1]]
    periods = (t[starts[1:]] - t[starts[:-1]])[same]
    return float(np.mean(periods)) if periods.size else math.nan


def _flow_rows(flows: pd.DataFrame) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The flows table's rows as dicts (``iterrows`` builds a Series per row: 50 us each)."""
    return zip(flows.index, flows.to_dict(orient="records"))


def _get(row: dict[str, Any], key: str, default: Any = 0) -> Any:
    return row[key] if key in row else default


EXTRA_COUNTERS = (
    "duplicate_packets",
    "dropped_packets",
    "rto_count",
    "recoveries",
    "spurious_retransmissions",
    "undos",
    "reordering",
    "reord_seen",
    "tlp_probes",
    "in_flight_packets_at_end",
    "ce_packets",
    "ece_acks",
    "ecn_reductions",
)
"""The engine's per-flow counters copied into summary.json as they are (where present)."""


def flow_metrics(run: Any) -> pd.DataFrame:
    """Per-flow metrics, one row per flow (index ``flow``). Computed once per RunData
    (for its series and flows tables); each call returns a copy."""
    kept = getattr(run, "_per_flow", None)
    if kept is not None and kept[0] is run.series and kept[1] is run.flows:
        return kept[2].copy()
    df = _flow_metrics(run)
    if hasattr(run, "_per_flow"):
        run._per_flow = (run.series, run.flows, df.copy())
    return df


def _flow_metrics(run: Any) -> pd.DataFrame:
    fl = run.flows
    series = run.series
    has_flow = "flow" in series
    s = Slices(series)
    cols = set(series.columns) if has_flow else set()
    t = s.column("time_s") if "time_s" in cols else None
    mode_col = mode_column(series) if has_flow else None
    est_col = bw_estimate_column(series) if has_flow else None
    gain = s.column("cc_pacing_gain") if "cc_pacing_gain" in cols else None
    est = s.column(est_col) if est_col is not None else None
    means = {
        key: s.column(col)
        for key, col in (
            ("mean_srtt_ms", "srtt_ms"),
            ("mean_cwnd_pkts", "cwnd_pkts"),
            ("mean_min_rtt_estimate_ms", "cc_min_rtt_ms"),
        )
        if col in cols
    }
    rtt = s.column("rtt_ms") if "rtt_ms" in cols else None
    p95 = s.percentile("rtt_ms", fl.index.to_numpy(), 95) if rtt is not None else None
    p95_of = dict(zip(fl.index, p95)) if p95 is not None else {}
    dur = run.duration_s
    rows, thr = [], []
    for fid, row in _flow_rows(fl):
        lo, hi = s.bounds(fid) if has_flow else (0, 0)
        start_s = float(row["start_s"])
        active = max(0.0, min(float(row["stop_s"]), dur) - start_s)
        # m.rtt_stats: the mean and 95th percentile of the intervals' RTT samples.
        mean_rtt = mean_dropna(rtt[lo:hi]) if rtt is not None else math.nan
        p95_rtt = float(p95_of[fid]) if rtt is not None else math.nan
        throughput = m.rate_bps(float(_get(row, "received_bytes")), active)
        thr.append(throughput)
        fm = FlowModes(s, mode_col, lo, hi)
        tf = t[lo:hi] if t is not None else None
        out = {
            "flow": int(fid),
            "group": int(row["group"]),
            "cc": row["cc"],
            "start_s": start_s,
            "stop_s": float(row["stop_s"]),
            "rtt_ms": float(row["rtt_ms"]),
            "goodput_bps": m.rate_bps(float(_get(row, "delivered_bytes")), active),
            "throughput_bps": throughput,
            "sent_packets": int(_get(row, "sent_packets")),
            "retransmitted_packets": int(_get(row, "retransmitted_packets")),
            "retransmission_rate": m.retransmission_rate(
                _get(row, "retransmitted_packets"), _get(row, "sent_packets")
            ),
            "mean_rtt_ms": mean_rtt,
            "p95_rtt_ms": p95_rtt,
        }
        for key in ("mean_srtt_ms", "mean_cwnd_pkts", "mean_min_rtt_estimate_ms"):
            out[key] = mean_dropna(means[key][lo:hi]) if key in means else math.nan
        out["startup_exit_s"] = startup_exit_s(fm, tf, start_s) if tf is not None else math.nan
        out["probe_rtt_entries"] = mode_entries(fm, "PROBE_RTT")
        out["mean_probe_rtt_duration_s"] = mean_mode_duration_s(fm, "PROBE_RTT", run.interval_s)
        out["mean_bw_estimate_bps"] = mean_bw_estimate_bps(
            fm, est[lo:hi] if est is not None else None
        )
        out["mean_probe_bw_cycle_s"] = (
            mean_probe_bw_cycle_s(fm, gain[lo:hi] if gain is not None else None, tf)
            if tf is not None
            else math.nan
        )
        out["received_bytes"] = int(_get(row, "received_bytes"))
        out["delivered_bytes"] = int(_get(row, "delivered_bytes"))
        rwnd = row.get("rwnd_limited_ns")
        if "rwnd_limited_ns" in row and not pd.isna(rwnd):
            # Time new data waited for the receiver's window (tcpi_rwnd_limited).
            out["rwnd_limited_s"] = float(rwnd) / 1e9
        for extra in EXTRA_COUNTERS:
            if extra in row:
                out[extra] = int(row[extra])
        group = int(row["group"])
        if 0 <= group < len(run.spec.flows) and run.spec.flows[group].size is not None:
            # Flow completion time: start to the last byte delivered in order (the engine's
            # completed_ns); null for a transfer that did not finish.
            done = row.get("completed_ns")
            out["size_bytes"] = size_bytes(run.spec, group)
            out["fct_s"] = (
                float(done) / 1e9 - start_s if done is not None and not pd.isna(done) else math.nan
            )
        rows.append(out)
    df = pd.DataFrame(rows)
    if not df.empty:
        df["share"] = m.share(thr)
        df = df.set_index("flow")
    return df


def size_bytes(spec: Any, group: int) -> int:
    size = spec.flows[group].size
    return int(size.value) * (spec.tcp.mss if size.unit == "pkt" else 1)


def window_flows(
    run: Any, t0: float, t1: float
) -> tuple[list[dict[str, Any]], list[float], pd.DataFrame]:
    """The per-flow part of :func:`tcplab.analysis.summary.window_metrics`: each flow's
    means over the samples in ``(t0, t1]`` while it runs (from its start to one interval
    after its stop), its retransmissions summed; also the throughputs and the window's
    rows (``sel``)."""
    series = run.series
    if series.empty:
        sel = series
    else:
        time = series["time_s"]
        sel = series[(time > t0 + 1e-12) & (time <= t1 + 1e-12)]
    has_flow = "flow" in sel
    s = Slices(sel)
    cols = set(sel.columns)
    t = s.column("time_s") if "time_s" in cols else np.zeros(0)
    col = {c: s.column(c) for c in _WINDOW_COLUMNS if c in cols}
    mode_col = mode_column(sel) if has_flow else None
    est_col = bw_estimate_column(sel)
    est = s.column(est_col) if est_col is not None else None
    flows: list[dict[str, Any]] = []
    thr: list[float] = []
    for fid, row in _flow_rows(run.flows):
        lo, hi = s.bounds(fid) if has_flow else (0, len(sel))
        tf = t[lo:hi]
        keep = (tf > float(row["start_s"])) & (tf <= float(row["stop_s"]) + run.interval_s)
        n = int(keep.sum())
        kept = {c: a[lo:hi][keep] for c, a in col.items()}

        def mean_of(c: str, kept: dict[str, np.ndarray] = kept) -> float:
            return mean_dropna(kept[c]) if c in kept else math.nan

        tput = mean_skipna(kept["throughput_bps"]) if n else math.nan
        thr.append(tput)
        fm = _KeptModes(s, mode_col, lo, hi, keep)
        flows.append(
            {
                "flow": int(fid),
                "cc": row["cc"],
                "throughput_bps": tput,
                "goodput_bps": mean_skipna(kept["goodput_bps"]) if n else math.nan,
                "retransmitted_packets": _sum_int(kept["retransmits"])
                if "retransmits" in kept
                else 0,
                "mean_rtt_ms": m.rtt_stats(kept["rtt_ms"])[0]
                if "rtt_ms" in kept and n
                else math.nan,
                "mean_srtt_ms": mean_of("srtt_ms"),
                "mean_inflight_pkts": mean_of("inflight_pkts"),
                "mean_cwnd_pkts": mean_of("cwnd_pkts"),
                "mean_bw_estimate_bps": mean_bw_estimate_bps(
                    fm, est[lo:hi][keep] if est is not None else None
                ),
            }
        )
    return flows, thr, sel


_WINDOW_COLUMNS = (
    "throughput_bps",
    "goodput_bps",
    "retransmits",
    "rtt_ms",
    "srtt_ms",
    "inflight_pkts",
    "cwnd_pkts",
)


def _sum_int(a: np.ndarray) -> int:
    """``int(Series.sum())``: NaN counts as 0."""
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), 0.0, a)
    return int(a.sum())


class _KeptModes(FlowModes):
    """FlowModes of a flow's rows restricted by ``keep`` (its active rows in a window)."""

    def __init__(self, s: Slices, col: str | None, lo: int, hi: int, keep: np.ndarray) -> None:
        super().__init__(s, col, lo, hi)
        if col is not None:
            self._keep = keep
            self.present = self.present[keep]
            self.any = bool(self.present.any())

    def is_mode(self, mode: str) -> np.ndarray:
        return super().is_mode(mode)[self._keep]
