"""Stored runs, or sweeps, side by side: ``tcplab compare A B [...]``.

The point is fidelity work (the same spec on the simulator and on the kernel, or one spec
before and after an engine change): every run is compared with the first, the
*reference*, metric by metric, per flow and in aggregate, and one figure overlays their
time series. Only stored files are read (``spec.toml``, ``summary.json``,
``series.parquet``, ``queue.parquet``); nothing is simulated.

What is printed, in order:

1. how the resolved specs differ, field by field (path, the value in each run;
   :mod:`tcplab.report.spec_diff`); nothing when they are equal;
2. notes on mismatches (algorithms, durations, flow counts, sweep points missing on one
   side);
3. the table: each run's value, ``LABEL - REF`` and ``LABEL / REF``. Rates are in Mbit/s
   (a metric ``goodput_bps`` of summary.json appears as ``goodput_mbps``), in the printed
   text and in compare.csv alike, so the numbers read the same everywhere. Latency
   probes (``[[probes]]``) add rows ``probe:NAME``, matched by the probe's name.

Flows are matched by their index. Runs of different specs can be compared, but a flow
whose algorithm differs between the runs is reported, and flows present in only some of
the runs appear with empty cells for the others.

Sweep directories (``sweep.json``) are compared point by point: runs are matched by their
swept values and seed; a run on one side without a partner on the other is named in the
notes. The table has one row per matched run and aggregate metric (plus each algorithm's
share), keyed by the swept values and the seed. The spec difference of sweeps is that of
their matched runs with the swept paths left out (those differ by design). No overlay
figure is drawn for sweeps (one per point would be a gallery, not a comparison).

Tables are rendered by ``tabulate`` (text and GitHub Markdown).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tabulate import tabulate

from tcplab.analysis.checks import probe_value
from tcplab.errors import SpecError
from tcplab.metric_table import COMPARE_AGGREGATE, COMPARE_FLOW, COMPARE_PROBE
from tcplab.report.spec_diff import diff_docs, read_resolved
from tcplab.report.units import unit
from tcplab.storage.directory import is_run_dir
from tcplab.storage.files import read_json
from tcplab.storage.ownership import write_owned

# What a researcher checks first when two runs of one scenario disagree:
# shares and rates, losses, delay and queue, and BBR's state timings. The rows of the
# table of metrics with a ``compare`` position.
FLOW_METRICS = COMPARE_FLOW
AGGREGATE_METRICS = COMPARE_AGGREGATE
PROBE_METRICS = COMPARE_PROBE  # per latency probe, matched by name


def _probe_names(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """The probes' names in any of the runs, in first-seen order."""
    seen = [p.get("name") for s in summaries for p in s.get("probes") or []]
    return list(dict.fromkeys(n for n in seen if n is not None))


SHOWN_SUFFIX = {"Mbit/s": "_mbps", "ms": "_ms"}
"""The name suffix of a value converted to the unit (``_mbps``: Mbit/s)."""


def shown_metric(name: str) -> tuple[str, float]:
    """The metric's name in the comparison and the divisor of its values, by the reports'
    unit rule (:func:`tcplab.report.units.unit`): rates in Mbit/s (``goodput_bps`` ->
    ``goodput_mbps``, / 1e6), microseconds and nanoseconds in ms; the name's suffix says
    the unit shown. Everything else as stored."""
    scale, text = unit(name)
    if scale == 1.0:
        return name, 1.0
    stem, sel = (name.split("[", 1) + [""])[:2]
    shown = stem.rsplit("_", 1)[0] + SHOWN_SUFFIX[text]
    return shown + (f"[{sel}" if sel else ""), scale


@dataclass
class Comparison:
    """The side-by-side table of stored runs (or of sweeps' matched runs).

    Attributes
    ----------
    labels : list of str
        One label per run (the directory name, or its parent's when the names repeat,
        as ``DIR/sim`` and ``DIR/kernel`` of ``tcplab run --backend sim,kernel`` do).
    table : DataFrame
        Runs: one row per (scope, metric), scope ``aggregate``, ``flowN (cc)`` or
        ``cc:NAME``. Sweeps: one row per (swept values, seed, metric). Then each run's
        value under its label and, for every run after the first, ``LABEL - REF`` (the
        difference) and ``LABEL / REF`` (the ratio, empty when the reference is 0 or
        missing). Rates in Mbit/s (metric names ending ``_mbps``).
    notes : list of str
        Mismatches worth knowing before reading the numbers (different algorithms,
        durations, flow counts, sweep points present on one side only).
    spec_diff : list of (path, [value per run])
        The resolved specs' differences; empty when they are equal.
    """

    labels: list[str]
    table: pd.DataFrame
    notes: list[str]
    spec_diff: list[tuple[str, list[str]]] = field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"<Comparison {' vs '.join(self.labels)}: {len(self.spec_diff)} spec differences, "
            f"{len(self.table)} rows, {len(self.notes)} notes>"
        )

    def spec_diff_table(self, fmt: str = "simple") -> str:
        """The spec difference as a table (path, value in each run); "" when equal."""
        if not self.spec_diff:
            return ""
        return tabulate(
            [[path, *values] for path, values in self.spec_diff],
            headers=["spec field", *self.labels],
            tablefmt=fmt,
            disable_numparse=True,
        )

    def metrics_table(self, fmt: str = "simple") -> str:
        return tabulate(
            self.table.astype(object).where(self.table.notna(), None),
            headers="keys",
            tablefmt=fmt,
            showindex=False,
            floatfmt=".4g",
            missingval="-",
        )

    def text(self) -> str:
        """The spec difference, the notes, then the metrics table, as aligned text."""
        parts = []
        if self.spec_diff:
            parts += ["The specs differ in:", self.spec_diff_table(), ""]
        parts += [f"note: {n}" for n in self.notes]
        parts.append(self.metrics_table())
        return "\n".join(parts)

    def markdown(self) -> str:
        parts = []
        if self.spec_diff:
            parts += ["The specs differ in:", "", self.spec_diff_table("github"), ""]
        parts += [f"- {n}" for n in self.notes] + ([""] if self.notes else [])
        parts.append(self.metrics_table("github"))
        return "\n".join(parts) + "\n"


def _number(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _read_json(d: Path, name: str) -> dict[str, Any]:
    try:
        return read_json(d / name)
    except (OSError, ValueError) as exc:
        raise SpecError(
            [(name, f"cannot be read ({type(exc).__name__}: {exc}); re-run the experiment")],
            str(d),
        ) from None


def _read_summary(d: Path) -> dict[str, Any]:
    if not is_run_dir(d):
        raise SpecError(
            [("", "not a tcplab run or sweep directory (no manifest.json or sweep.json)")],
            str(d),
        )
    return _read_json(d, "summary.json")


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


def _row(key: dict[str, Any], metric: str, values: list[Any], labels: Sequence[str]) -> dict:
    """One table row: the key columns, the metric (rates in Mbit/s), each run's value,
    then the difference and ratio of each later run against the first."""
    name, scale = shown_metric(metric)
    row: dict[str, Any] = {**key, "metric": name}
    nums = [_number(v) / scale for v in values]
    for lab, v in zip(labels, nums):
        row[lab] = v
    ref = nums[0]
    for lab, v in zip(labels[1:], nums[1:]):
        row[f"{lab} - {labels[0]}"] = v - ref
        row[f"{lab} / {labels[0]}"] = v / ref if ref == ref and ref != 0 else math.nan
    return row


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
        rows.append(_row({"scope": scope}, metric, values, labels))

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
    for name in _probe_names(summaries):
        for metric in PROBE_METRICS:
            add(f"probe:{name}", metric, [probe_value(s, metric, name) for s in summaries])
    return Comparison(list(labels), pd.DataFrame(rows), notes)


def is_sweep_dir(d: Path) -> bool:
    return (Path(d) / "sweep.json").is_file()


def compare_sweeps(dirs: Sequence[Path], labels: Sequence[str]) -> Comparison:
    """Sweeps point by point: runs matched by (swept values, seed); the first sweep is the
    reference. Only finished runs (``runs/<digest>`` with a manifest) take part."""

    plans = [_read_json(d, "sweep.json") for d in dirs]
    notes: list[str] = []
    axes = [list(p.get("axes", {})) for p in plans]
    if any(sorted(a) != sorted(axes[0]) for a in axes[1:]):
        notes.append(
            "the sweeps vary different parameters: "
            + "; ".join(f"{lab} {', '.join(a) or 'none'}" for lab, a in zip(labels, axes))
        )
    # (swept values, seed) -> run directory, per sweep
    found: list[dict[str, Path]] = []
    points: dict[str, tuple[dict[str, Any], int]] = {}
    for d, plan in zip(dirs, plans):
        runs: dict[str, Path] = {}
        for r in plan.get("runs", []):
            key = json.dumps([r["point"], r["seed"]], sort_keys=True, default=str)
            if is_run_dir(Path(d) / "runs" / r["digest"]):
                runs[key] = Path(d) / "runs" / r["digest"]
                points.setdefault(key, (r["point"], r["seed"]))
        found.append(runs)
    rows: list[dict[str, Any]] = []
    diffs: dict[tuple[str, tuple[str, ...]], None] = {}
    swept = {a for names in axes for a in names} | {"experiment.seed"}
    for key, (point, seed) in points.items():
        where = ", ".join(f"{k} = {v}" for k, v in point.items())
        where = f"[{where + ', ' if where else ''}seed {seed}]"
        missing = [lab for lab, runs in zip(labels, found) if key not in runs]
        if missing:
            notes.append(f"point {where} is missing in {', '.join(missing)}")
            continue
        run_dirs = [runs[key] for runs in found]
        specs = [read_resolved(d) for d in run_dirs]
        for path, values in diff_docs(specs, ignore=swept):
            diffs[(path, tuple(values))] = None
        sums = [_read_json(d, "summary.json") for d in run_dirs]
        cell = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in point.items()}
        cell["seed"] = seed
        for metric in AGGREGATE_METRICS:
            rows.append(
                _row(cell, metric, [s.get("aggregate", {}).get(metric) for s in sums], labels)
            )
        for cc in sorted({cc for s in sums for cc in s.get("by_cc", {})}):
            rows.append(
                _row(
                    cell,
                    f"share[{cc}]",
                    [s.get("by_cc", {}).get(cc, {}).get("share") for s in sums],
                    labels,
                )
            )
        for name in _probe_names(sums):
            for metric in PROBE_METRICS:
                values = [probe_value(s, metric, name) for s in sums]
                rows.append(_row(cell, f"{metric}[{name}]", values, labels))
    if not rows:
        notes.append("no point of the sweeps is present (finished) in all of them")
    spec_diff = [(path, list(values)) for path, values in diffs]
    return Comparison(list(labels), pd.DataFrame(rows), notes, spec_diff)


def compare_runs(dirs: Sequence[str | Path], out: str | Path | None = None) -> Comparison:
    """Compare stored runs, or sweep directories point by point; with ``out``, also write
    ``compare.csv``, ``compare.md`` and (for runs) ``compare.png`` there (atomically: the
    directory appears complete or not at all).

    Raises
    ------
    SpecError
        If fewer than two directories are given, one is neither a readable run nor a
        sweep, or runs and sweeps are mixed.
    """
    paths = [Path(d) for d in dirs]
    if len(paths) < 2:
        raise SpecError([("", "compare needs at least two run (or sweep) directories")])
    labels = run_labels(paths)
    sweeps = [is_sweep_dir(p) for p in paths]
    for p, sweep in zip(paths, sweeps):
        if not sweep:
            _read_summary(p)  # refuses what is neither a run nor a sweep, naming it
    if any(sweeps) and not all(sweeps):
        kinds = ", ".join(f"{p} ({'sweep' if s else 'run'})" for p, s in zip(paths, sweeps))
        raise SpecError([("", f"compare runs with runs and sweeps with sweeps; got {kinds}")])
    if all(sweeps):
        result = compare_sweeps(paths, labels)
    else:
        result = compare_summaries([_read_summary(d) for d in paths], labels)
        result.spec_diff = diff_docs([read_resolved(d) for d in paths])
    if out is not None:

        def write(tmp: Path) -> list[str]:
            result.table.to_csv(tmp / "compare.csv", index=False)
            (tmp / "compare.md").write_text(
                f"# Comparison: {', '.join(labels)}\n\nReference: {labels[0]} ({paths[0]}).\n\n"
                + result.markdown()
            )
            if all(sweeps):
                return list(OUTPUT_FILES[:2])
            draw_overlay(paths, labels, tmp / "compare.png")
            return list(OUTPUT_FILES)

        # Only files this comparison wrote before are replaced (outputs.json's digests);
        # the user's files beside them stay, and one of theirs in the way is refused.
        write_owned(Path(out), write, "-o", kind="comparison", remove_stale=True)
    return result


OUTPUT_FILES = ("compare.csv", "compare.md", "compare.png")
"""What ``compare -o`` writes (the PNG for runs only)."""


def draw_overlay(paths: Sequence[Path], labels: Sequence[str], target: Path) -> None:
    """One figure, every run overlaid: per-flow throughput, RTT and cwnd, and the queue.
    Runs are told apart by line style; flows by their algorithm's colour, the run
    report's (the k-th algorithm of the first run gets tab10's k-th colour), with an
    algorithm's later flows in a run drawn lighter; the legend names each flow's algorithm."""
    # why: start-up time; plots imports matplotlib, which only drawing needs
    from tcplab.report.plots import algorithm_palette, new_figure

    styles = ["-", "--", ":", "-."]
    palette = algorithm_palette()
    fig = new_figure(figsize=(12, 12))
    axes = fig.subplots(4, 1, sharex=True)
    panels = [
        ("throughput_bps", 1e6, "throughput [Mbit/s]"),
        ("rtt_ms", 1.0, "RTT [ms]"),
        ("cwnd_pkts", 1.0, "cwnd [packets]"),
    ]
    for k, (path, label) in enumerate(zip(paths, labels)):
        style = styles[k % len(styles)]
        series = pd.read_parquet(path / "series.parquet")
        queue = pd.read_parquet(path / "queue.parquet")
        flows = sorted(series["flow"].unique()) if "flow" in series else []
        ccs = [f.get("cc", "?") for f in _read_summary(path).get("flows", [])]
        cc_of = {fid: ccs[int(fid)] if int(fid) < len(ccs) else "?" for fid in flows}
        colors = palette(cc_of.values())
        nth = {fid: list(cc_of.values())[:j].count(cc_of[fid]) for j, fid in enumerate(flows)}
        for ax, (column, scale, ylabel) in zip(axes, panels):
            if column not in series:
                continue
            for fid in flows:
                sel = series[series["flow"] == fid]
                ax.plot(
                    sel["time_s"],
                    sel[column] / scale,
                    ls=style,
                    lw=0.9,
                    color=colors[cc_of[fid]],
                    alpha=1.0 if nth[fid] == 0 else 0.6,
                    label=f"{label}: flow {fid} ({cc_of[fid]})",
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
