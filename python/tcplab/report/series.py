"""What the report plots, computed apart from drawing it (so tests can check the numbers
and the PNG/PDF and HTML reports show the same): per-algorithm totals, goodput smoothed
over an RTT-sized window, the samples where in-order delivery released held data, empirical
CDFs, and the decimation of long series to the pixels a panel has.

Model and choices (docs/METRICS.md, "Report plots"):

- Per-algorithm total of a rate: the sum over that algorithm's flows of their per-interval
  values (a flow not running counts 0), so the totals add up to the all-flows total.
- Smoothed goodput: a flow's goodput is bytes released *in order* to the application. After
  a repaired loss, the receiver releases at once the data it held behind the hole, so one
  sample interval can read above the link rate (the bytes crossed the link earlier; the
  receiver's throughput never exceeds it). The hole is repaired about one RTT after the
  loss, so the report shows goodput as the trailing mean over ``ceil(RTT / interval) + 1``
  samples, RTT the largest of the flows' mean RTTs: the fewest whole samples that always
  hold a one-RTT hold together with its release, whichever sample boundary it straddles.
  A window holding the release but not the hold before it can still read above the link
  rate; every such reading is marked as a release of held data (it can only be one: the
  flows' throughput together never exceeds the link rate).
- Decimation: a series with more samples than a panel has pixels is reduced to the minimum
  and maximum of each pixel-wide bucket, in time order, so spikes and dips stay visible.

Deviations: none from the metrics of docs/METRICS.md; smoothing and decimation change only
what is drawn, never summary.json.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tcplab.analysis.per_flow import mode_column
from tcplab.analysis.rundata import RunData
from tcplab.specs.units import format_rate, format_time


def algorithm_of(run: RunData) -> dict[int, str]:
    """Flow id -> its algorithm's name."""
    return {int(fid): str(cc) for fid, cc in run.flows["cc"].items()}


def algorithms(run: RunData) -> list[str]:
    """The run's algorithms in order of their first flow."""
    return list(dict.fromkeys(str(c) for c in run.flows["cc"]))


def state_column(run: RunData) -> str | None:
    """The column the mode panel draws: the algorithm's own mode (BBR's), else the TCP
    state (ca_state); None if neither was recorded."""
    return mode_column(run.series) or ("ca_state" if "ca_state" in run.series.columns else None)


def active_rows(run: RunData, fid: int) -> pd.DataFrame:
    """Flow ``fid``'s series rows while it runs: after its start, up to one interval after
    its stop (the sample that holds its last bytes)."""
    sel = run.series[run.series["flow"] == fid]
    row = run.flows.loc[fid]
    return sel[
        (sel["time_s"] > float(row["start_s"]))
        & (sel["time_s"] <= float(row["stop_s"]) + run.interval_s)
    ]


def per_algorithm_total(wide: pd.DataFrame, algo_of: dict[int, str]) -> pd.DataFrame:
    """Sum of ``wide``'s flow columns per algorithm (NaN, a flow not running, counts 0).
    Columns in order of the algorithms' first flow."""
    if wide.empty:
        return pd.DataFrame(index=wide.index)
    order = list(dict.fromkeys(algo_of.get(int(f), "?") for f in wide.columns))
    out = {}
    for cc in order:
        cols = [f for f in wide.columns if algo_of.get(int(f), "?") == cc]
        out[cc] = wide[cols].apply(pd.to_numeric, errors="coerce").fillna(0.0).sum(axis=1)
    return pd.DataFrame(out, index=wide.index)


def smoothing_samples(run: RunData, mean_rtt_ms: pd.Series | None = None) -> int:
    """The RTT-sized window in samples: ceil(largest mean RTT / sample interval) + 1.
    ``mean_rtt_ms`` is the per-flow mean RTT (summary); without one, the largest flow's
    mean of the series' RTT column; without any RTT, one sample (no smoothing)."""
    rtt = np.nan
    if mean_rtt_ms is not None:
        vals = pd.to_numeric(mean_rtt_ms, errors="coerce")
        if vals.notna().any():
            rtt = float(vals.max())
    if rtt != rtt:
        for col in ("rtt_ms", "srtt_ms"):
            if col in run.series.columns:
                by_flow = pd.to_numeric(run.series[col], errors="coerce").groupby(
                    run.series["flow"]
                )
                m = by_flow.mean()
                if m.notna().any():
                    rtt = float(m.max())
                    break
    interval_ms = run.interval_s * 1e3
    if rtt != rtt or interval_ms <= 0:
        return 1
    # 1e-9: an RTT of exactly k intervals needs k samples, not k + 1, for the hold itself.
    return math.ceil(rtt / interval_ms - 1e-9) + 1


def trailing_mean(wide: pd.DataFrame, samples: int) -> pd.DataFrame:
    """Trailing mean over ``samples`` samples of each column; NaN (not running) stays NaN
    and is left out of the windows it falls in."""
    if samples <= 1 or wide.empty:
        return wide
    return wide.rolling(samples, min_periods=1).mean().where(wide.notna())


def above_link_rate(goodput: pd.DataFrame, rate_bps: Any) -> pd.DataFrame:
    """True where a flow's (smoothed) goodput exceeds the link rate at that sample
    (``rate_bps``: a number or one value per row). Since the bytes reaching the receivers
    never exceed the link rate, every such sample releases data held behind a hole."""
    g = goodput.apply(pd.to_numeric, errors="coerce")
    rate = np.broadcast_to(np.asarray(rate_bps, dtype=float), (len(g),))
    return g.gt(pd.Series(rate, index=g.index), axis=0)


def ecdf(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Sorted finite values and their empirical CDF (i / n for the i-th smallest)."""
    x = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    x = np.sort(x[np.isfinite(x)])
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def decimate(x: Any, y: Any, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``3 * buckets`` points: the minimum and the maximum of ``y`` in each of
    ``buckets`` equal runs of samples, in the order they occur, and a NaN after a run that
    holds one (so a line does not bridge a flow's pause). Shorter series are returned whole.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    if buckets <= 0 or n <= 2 * buckets:
        return x, y
    k = math.ceil(n / buckets)
    rows = math.ceil(n / k)
    pad = rows * k - n
    yy = np.concatenate([y, np.full(pad, np.nan)]).reshape(rows, k)
    real = (np.arange(rows * k) < n).reshape(rows, k)
    finite = np.isfinite(yy)
    lo = np.where(finite, yy, np.inf).argmin(axis=1)
    hi = np.where(finite, yy, -np.inf).argmax(axis=1)
    base = np.arange(rows) * k
    first = base + np.minimum(lo, hi)
    second = base + np.maximum(lo, hi)
    any_finite = finite.any(axis=1)
    gap = (~finite & real).any(axis=1)
    last = base + real.sum(axis=1) - 1
    # Three slots per bucket: first extreme, second extreme, gap marker; unused dropped.
    idx = np.stack([first, second, last], axis=1)
    keep = np.stack([any_finite, any_finite & (second != first), gap], axis=1)
    ys = y[idx]
    ys[:, 2] = np.nan
    return x[idx][keep], ys[keep]


def run_title(run: Any) -> str:
    """A run's one-line title: experiment, bottleneck, flows, seed, duration."""
    s = run.spec
    b = s.bottleneck
    buf = str(b.buffer)
    return (
        f"{s.experiment.name}  —  bottleneck {format_rate(b.rate)}, {format_time(b.delay)} one-way, "
        f"buffer {buf}, loss {b.loss:g}; {len(run.flows)} flows; seed {s.experiment.seed}; "
        f"{format_time(s.experiment.duration)}"
    )


TIME_PANELS: tuple[tuple[str, str], ...] = (
    ("throughput_algorithm", "throughput per algorithm"),
    ("throughput_flow", "throughput per flow"),
    ("goodput", "goodput per flow"),
    ("sending_rate", "sending rate"),
    ("pacing_rate", "pacing rate"),
    ("fairness", "fairness over time"),
    ("rtt", "RTT"),
    ("cwnd", "congestion window"),
    ("inflight", "inflight"),
    ("backlog", "bottleneck queue backlog"),
    ("drops", "drops (and CE marks) at the bottleneck"),
    ("retransmissions", "retransmissions per algorithm"),
    ("bw_estimate", "BBR bottleneck bandwidth estimate"),
    ("min_rtt", "BBR min_rtt estimate"),
    ("mode", "algorithm mode / state"),
)
"""The time-series panels of a run's report, in the order report.html stacks them: one
list for report.png and report.html (the page lacked six of the PNG's panels).
Each panel's title begins with its entry here in both; report.png lays them out in three
columns (rates, delay, state), report.html one above the other."""


def panel_title(key: str, detail: str = "") -> str:
    """The title of panel ``key`` (:data:`TIME_PANELS`), with ``detail`` after it."""
    title = dict(TIME_PANELS)[key]
    return f"{title} {detail}" if detail else title


def cdf_groups(run: RunData) -> list[tuple[str, str, list[int], int]]:
    """The groups of flows the report's CDFs draw one line each for: (label, algorithm,
    flow ids, index among its algorithm's lines). One group per algorithm, split by RTT
    where its flows' RTTs differ: pooling a 10 ms and a 50 ms BBR flow into one RTT
    distribution drew a shape neither flow has."""
    out = []
    for cc in algorithms(run):
        fids = [int(f) for f, c in run.flows["cc"].items() if str(c) == cc]
        rtts = run.flows.loc[fids, "rtt_ms"] if "rtt_ms" in run.flows else None
        distinct = [] if rtts is None else sorted({float(r) for r in rtts if r == r})
        if len(distinct) <= 1:
            out.append((cc, cc, fids, 0))
            continue
        for k, rtt in enumerate(distinct):
            ids = [f for f in fids if float(run.flows.loc[f, "rtt_ms"]) == rtt]
            out.append((f"{cc}, {rtt:g} ms", cc, ids, k))
    return out


def group_label(run: RunData, cc: str, fids: list[int]) -> str:
    """A group of flows named by algorithm and RTT ("bbr, 20 ms"), the RTT given even
    where the algorithm has one (cdf_groups' labels leave it out then), for the legend
    and the numbers of a report with many flows."""
    rtts = run.flows.loc[fids, "rtt_ms"] if "rtt_ms" in run.flows else None
    distinct = [] if rtts is None else sorted({float(r) for r in rtts if r == r})
    return f"{cc}, {distinct[0]:g} ms" if len(distinct) == 1 else cc


def throughput_delay_groups(run: RunData, summary: pd.DataFrame) -> list[tuple]:
    """The points of the throughput-delay plot, shared by report.png and report.html:
    per group of cdf_groups (algorithm, RTT), (algorithm, its index among that
    algorithm's groups, the group's label, flow ids, 95th-percentile RTTs in ms,
    goodputs in bit/s); [] when the summary lacks either metric."""
    if summary.empty or not {"p95_rtt_ms", "goodput_bps"} <= set(summary.columns):
        return []
    rows = summary.set_index("flow") if "flow" in summary.columns else summary
    out = []
    for _label, cc, fids, k in cdf_groups(run):
        ids = [f for f in fids if f in rows.index]
        x = pd.to_numeric(rows.loc[ids, "p95_rtt_ms"], errors="coerce").to_numpy(dtype=float)
        y = pd.to_numeric(rows.loc[ids, "goodput_bps"], errors="coerce").to_numpy(dtype=float)
        out.append((cc, k, group_label(run, cc, ids), ids, x, y))
    return out
