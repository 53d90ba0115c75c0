"""Two or more stored runs side by side: ``tcplab compare DIR_A DIR_B [...]``.

The point is fidelity work (the same spec on the simulator and on the kernel, or one spec
before and after an engine change): every run is compared with the first, the
*reference*, metric by metric, per flow and in aggregate, and one figure overlays their
time series. Only stored files are read (``summary.json``, ``series.parquet``,
``queue.parquet``); nothing is simulated.

Flows are matched by their index. Runs of different specs can be compared, but a flow
whose algorithm differs between the runs is reported, and flows present in only some of
the runs appear with empty cells for the others.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.errors import SpecError

# What a researcher checks first when two runs of one scenario disagree (issue 9):
# shares and rates, losses, delay and queue, and BBR's state timings.
FLOW_METRICS = [
    "share",
    "goodput_bps",
    "throughput_bps",
    "retransmitted_packets",
    "retransmission_rate",
    "mean_rtt_ms",
    "p95_rtt_ms",
    "mean_srtt_ms",
    "mean_cwnd_pkts",
    "mean_min_rtt_estimate_ms",
    "startup_exit_s",
    "probe_rtt_entries",
]
AGGREGATE_METRICS = [
    "utilization",
    "total_goodput_bps",
    "jain_index",
    "retransmitted_packets",
    "retransmission_rate",
    "mean_backlog_pkts",
    "max_backlog_pkts",
    "mean_queueing_delay_ms",
    "bottleneck_drops_packets",
    "bdp_overestimation_mean",
    "probe_rtt_overlap_s",
]


@dataclass
class Comparison:
    """The side-by-side table of stored runs.

    Attributes
    ----------
    labels : list of str
        One label per run (the directory name, or its parent's when the names repeat,
        as ``DIR/sim`` and ``DIR/kernel`` of ``tcplab run --backend sim,kernel`` do not).
    table : DataFrame
        One row per (scope, metric): scope is ``aggregate``, ``flowN (cc)`` or
        ``cc:NAME``. Columns: each run's value under its label, then for every run after
        the first ``LABEL - REF`` (the difference) and ``LABEL / REF`` (the ratio, empty
        when the reference is 0 or missing).
    notes : list of str
        Mismatches worth knowing before reading the numbers (different algorithms,
        durations or flow counts).
    """

    labels: list[str]
    table: pd.DataFrame
    notes: list[str]

    def text(self) -> str:
        """The table as aligned text, the notes first."""
        lines = [f"note: {n}" for n in self.notes]
        lines.append(self.table.to_string(index=False, na_rep="-", float_format=_fmt))
        return "\n".join(lines)

    def markdown(self) -> str:
        head = "| " + " | ".join(self.table.columns) + " |"
        rule = "|" + "---|" * len(self.table.columns)
        rows = [
            "| " + " | ".join(_cell(v) for v in row) + " |"
            for row in self.table.itertuples(index=False)
        ]
        notes = [f"- {n}" for n in self.notes]
        return "\n".join(notes + ([""] if notes else []) + [head, rule] + rows) + "\n"


def _fmt(x: float) -> str:
    return "-" if x != x else f"{x:.4g}"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return _fmt(v)
    return "-" if v is None else str(v)


def _number(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _read_summary(d: Path) -> dict[str, Any]:
    from tcplab.runs.directory import is_run_dir

    if not is_run_dir(d):
        raise SpecError([("", "not a tcplab run directory (no manifest.json)")], str(d))
    try:
        return json.loads((d / "summary.json").read_text())
    except (OSError, ValueError) as exc:
        raise SpecError(
            [
                (
                    "summary.json",
                    f"cannot be read ({type(exc).__name__}: {exc}); re-run the experiment",
                )
            ],
            str(d),
        ) from None


def run_labels(dirs: Sequence[Path]) -> list[str]:
    """Short, distinct labels: directory names, prefixed by the parent where names repeat
    or are generic."""
    names = [d.resolve().name for d in dirs]
    if len(set(names)) == len(names):
        return names
    full = [f"{d.resolve().parent.name}/{d.resolve().name}" for d in dirs]
    if len(set(full)) == len(full):
        return full
    return [f"{i}:{n}" for i, n in enumerate(names)]


def compare_summaries(summaries: Sequence[dict[str, Any]], labels: Sequence[str]) -> Comparison:
    """Build the side-by-side table from parsed summary.json documents (the first is the
    reference)."""
    if len(summaries) < 2:
        raise SpecError([("", "compare needs at least two run directories")])
    notes: list[str] = []
    durations = {s.get("duration_s") for s in summaries}
    if len(durations) > 1:
        notes.append(
            "the runs have different durations: "
            + ", ".join(f"{lab} {s.get('duration_s')} s" for lab, s in zip(labels, summaries))
        )
    counts = [len(s.get("flows", [])) for s in summaries]
    if len(set(counts)) > 1:
        notes.append(
            "the runs have different flow counts: "
            + ", ".join(f"{lab} {n}" for lab, n in zip(labels, counts))
        )

    rows: list[dict[str, Any]] = []

    def add(scope: str, metric: str, values: list[Any]) -> None:
        row: dict[str, Any] = {"scope": scope, "metric": metric}
        nums = [_number(v) for v in values]
        for lab, v in zip(labels, nums):
            row[lab] = v
        ref = nums[0]
        for lab, v in zip(labels[1:], nums[1:]):
            row[f"{lab} - {labels[0]}"] = v - ref
            row[f"{lab} / {labels[0]}"] = v / ref if ref == ref and ref != 0 else math.nan
        rows.append(row)

    for metric in AGGREGATE_METRICS:
        add("aggregate", metric, [s.get("aggregate", {}).get(metric) for s in summaries])

    ccs = sorted({cc for s in summaries for cc in s.get("by_cc", {})})
    for cc in ccs:
        add(f"cc:{cc}", "share", [s.get("by_cc", {}).get(cc, {}).get("share") for s in summaries])

    for i in range(max(counts)):
        flows = [s["flows"][i] if i < len(s.get("flows", [])) else {} for s in summaries]
        algos = [f.get("cc") for f in flows]
        present = [a for a in algos if a is not None]
        if len(set(present)) > 1:
            notes.append(
                f"flow {i} runs different algorithms: "
                + ", ".join(f"{lab} {a}" for lab, a in zip(labels, algos))
            )
        scope = f"flow{i} ({present[0]})" if len(set(present)) == 1 else f"flow{i}"
        for metric in FLOW_METRICS:
            add(scope, metric, [f.get(metric) for f in flows])
    return Comparison(list(labels), pd.DataFrame(rows), notes)


def compare_runs(dirs: Sequence[str | Path], out: str | Path | None = None) -> Comparison:
    """Compare stored runs; with ``out``, also write ``compare.csv``, ``compare.md`` and
    ``compare.png`` there (atomically: the directory appears complete or not at all).

    Raises
    ------
    SpecError
        If fewer than two directories are given or one is not a readable run.
    """
    paths = [Path(d) for d in dirs]
    labels = run_labels(paths)
    result = compare_summaries([_read_summary(d) for d in paths], labels)
    if out is not None:
        from tcplab.runs.directory import atomic_dir, check_output_dir

        target = Path(out)
        check_output_dir(target)
        if target.exists() and not (target / "compare.csv").is_file():
            raise SpecError(
                [("-o", f"{target} exists and is not a tcplab comparison; choose another")]
            )
        with atomic_dir(target, replace=True) as tmp:
            result.table.to_csv(tmp / "compare.csv", index=False)
            (tmp / "compare.md").write_text(
                f"# Comparison: {', '.join(labels)}\n\nReference: {labels[0]} ({paths[0]}).\n\n"
                + result.markdown()
            )
            draw_overlay(paths, labels, tmp / "compare.png")
    return result


def draw_overlay(paths: Sequence[Path], labels: Sequence[str], target: Path) -> None:
    """One figure, every run overlaid: per-flow throughput, RTT and cwnd, and the queue.
    Runs are told apart by line style, flows by colour (as in the run report)."""
    from tcplab.report.plots import flow_colors, plt

    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(4, 1, figsize=(12, 12), sharex=True)
    panels = [
        ("throughput_bps", 1e6, "throughput [Mbit/s]"),
        ("rtt_ms", 1.0, "RTT [ms]"),
        ("cwnd_pkts", 1.0, "cwnd [packets]"),
    ]
    try:
        for k, (path, label) in enumerate(zip(paths, labels)):
            style = styles[k % len(styles)]
            series = pd.read_parquet(path / "series.parquet")
            queue = pd.read_parquet(path / "queue.parquet")
            flows = sorted(series["flow"].unique()) if "flow" in series else []
            colors = flow_colors(max(len(flows), 1))
            for ax, (column, scale, ylabel) in zip(axes, panels):
                if column not in series:
                    continue
                for j, fid in enumerate(flows):
                    sel = series[series["flow"] == fid]
                    ax.plot(
                        sel["time_s"],
                        sel[column] / scale,
                        ls=style,
                        lw=0.9,
                        color=colors[j],
                        label=f"{label}: flow {fid}",
                    )
                ax.set_ylabel(ylabel)
            if "backlog_pkts" in queue:
                axes[3].plot(
                    queue["time_s"],
                    queue["backlog_pkts"],
                    ls=style,
                    lw=0.9,
                    color="black",
                    label=label,
                )
        axes[3].set_ylabel("bottleneck backlog [packets]")
        axes[3].set_xlabel("time [s]")
        for ax in axes:
            ax.grid(True, lw=0.3, alpha=0.6)
            ax.legend(loc="upper right", fontsize=7, ncol=2)
        axes[0].set_title(
            " vs ".join(f"{lab} ({styles[k % len(styles)]})" for k, lab in enumerate(labels)),
            fontsize=10,
            loc="left",
        )
        fig.tight_layout()
        fig.savefig(target, dpi=90, metadata={"Software": None})
    finally:
        plt.close(fig)
