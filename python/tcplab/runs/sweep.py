"""Parameter sweeps: a grid over any spec paths, K seeds per point, a content-addressed
cache and resume.

The ``[sweep]`` table of a spec::

    [sweep]
    repeat = 3                                  # seeds experiment.seed, +1, +2
    "bottleneck.buffer" = ["0.5bdp", "1bdp", "5bdp"]
    "flows[0].cc" = ["bbr", "cubic"]
    metrics = ["jain_index", "utilization"]     # optional: what the summary plots show

Every run is stored in ``DIR/runs/<digest>/`` where the digest (tcplab.runs.digest) is
a versioned sha256 of the resolved spec (which holds the seed and every resolved
quantity), the files the run reads, the backend and the tcplab version. A run directory appears atomically when complete, so after a kill the sweep
resumes by skipping every digest already present: a finished run is never recomputed or
lost. ``DIR/table.csv`` (and ``.parquet``) has one row per run; ``DIR/summary_<axis>.png``
plots each metric against each swept parameter with error bars over seeds.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab import preset_file
from tcplab.backends import backend_of
from tcplab.errors import EngineError, SpecError
from tcplab.lowering import resolve
from tcplab.metric_table import AGGREGATE_KEYS, SWEEP_DEFAULT
from tcplab.runs.digest import run_digest
from tcplab.runs.executors import SharedPool, execute_local, execute_ray, say
from tcplab.runs.result import Storing
from tcplab.runs.sweep_table import build_table, write_summary, write_table
from tcplab.specs.checks import check_expression
from tcplab.specs.files import read_bounded
from tcplab.specs.limits import MAX_SWEEP_RUNS
from tcplab.specs.load import apply_overrides, parse_spec, read_toml
from tcplab.specs.model import Spec
from tcplab.specs.paths import check_path, expand_path, parse_path
from tcplab.specs.probes import names as probe_names
from tcplab.storage.directory import is_run_dir
from tcplab.storage.files import check_output_dir, clean_stale_tmp, tmp_prefix
from tcplab.storage.ownership import MAX_MANIFEST_BYTES, run_problem
from tcplab.version import __version__

RESERVED = ("repeat", "metrics")
SEED_LIMIT = 2**63  # experiment.seed's bound (specs/model.py Experiment)
DEFAULT_METRICS = list(SWEEP_DEFAULT)  # tcplab.metric_table: the rows with sweep=N


@dataclass
class Job:
    """One run of a sweep: the grid point, the repeat index and the resolved spec."""

    point: dict[str, Any]
    repeat: int
    seed: int
    spec: Spec
    digest: str


@dataclass
class Plan:
    """A validated sweep: its axes (path -> values), repeat count, metrics and jobs, and
    the experiment's name (its reports' title)."""

    axes: dict[str, list[Any]]
    repeat: int
    metrics: list[str]
    jobs: list[Job]
    name: str = ""


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(_flatten(v, key))
        else:
            out[key] = v
    return out


def plan_sweep(raw: dict[str, Any], source: str | None = None) -> Plan:
    """Check a raw spec with a ``[sweep]`` table and expand it into jobs.

    Raises
    ------
    SpecError
        For a sweep key that names no field, an empty value list, or any grid point
        whose spec is invalid (the message names the point).
    """
    raw = dict(raw)
    table = raw.pop("sweep", None)
    if not isinstance(table, dict):
        raise SpecError(
            [
                (
                    "sweep",
                    "the spec has no [sweep] table; add e.g. "
                    '[sweep] "bottleneck.buffer" = ["1bdp", "2bdp"]',
                )
            ],
            source,
        )
    parse_spec(raw, source)  # the base spec itself must be valid
    problems: list[tuple[str, str]] = []
    repeat = table.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        problems.append(("sweep.repeat", f"must be a whole number >= 1, got {repeat!r}"))
        repeat = 1
    metrics = table.get("metrics", DEFAULT_METRICS)
    if not isinstance(metrics, list) or not all(isinstance(x, str) for x in metrics):
        problems.append(
            ("sweep.metrics", "must be a list of metric names (summary.json aggregate keys)")
        )
        metrics = DEFAULT_METRICS
    axes: dict[str, list[Any]] = {}
    for key, values in _flatten({k: v for k, v in table.items() if k not in RESERVED}).items():
        try:
            for path in expand_path(key, raw):
                check_path(Spec, parse_path(path), raw)
        except ValueError as exc:
            problems.append((f"sweep.{key}", str(exc)))
            continue
        if not isinstance(values, list) or not values:
            problems.append((f"sweep.{key}", "must be a non-empty list of values"))
            continue
        axes[key] = values
    runs = repeat * math.prod(len(v) for v in axes.values())
    if runs > MAX_SWEEP_RUNS:
        problems.append(
            (
                "sweep",
                f"the grid has {runs:,} runs (grid points x repeat); the limit is {MAX_SWEEP_RUNS:,}",
            )
        )
    if problems:
        raise SpecError(problems, source)
    jobs: list[Job] = []
    for combo in itertools.product(*axes.values()) if axes else [()]:
        point = dict(zip(axes, combo))
        where = ", ".join(f"{k} = {v!r}" for k, v in point.items()) or "base"
        try:
            spec = parse_spec(apply_overrides(raw, point, "sweep"))
            if refused := preset_file.refuse(spec, preset_file.SWEEP_REFUSES):
                raise SpecError(refused)
            spec = resolve(spec)
        except SpecError as err:
            raise SpecError(
                [(f"sweep point [{where}]: {p}", m) for p, m in err.problems], source
            ) from None
        # The point's own seed (which a swept "experiment.seed" sets) starts its repeats.
        first_seed = spec.experiment.seed
        if first_seed + repeat - 1 >= SEED_LIMIT:
            raise SpecError(
                [
                    (
                        f"sweep point [{where}]: experiment.seed",
                        f"seed {first_seed} with repeat = {repeat} needs seeds up to "
                        f"{first_seed + repeat - 1}; seeds must be below 2**63",
                    )
                ],
                source,
            )
        for r in range(repeat):
            s = spec.model_copy(deep=True)
            s.experiment.seed = first_seed + r
            jobs.append(
                Job(
                    point,
                    r,
                    s.experiment.seed,
                    s,
                    run_digest(s),
                )
            )
    problems = [("sweep.metrics", why) for why in _metric_problems(metrics, jobs)]
    if problems:
        raise SpecError(problems, source)
    return Plan(axes, repeat, list(metrics), jobs, jobs[0].spec.experiment.name if jobs else "")


def _metric_problems(metrics: list[str], jobs: list[Job]) -> list[str]:
    """Why each metric names nothing the sweep's runs will have, checked against the
    runs themselves as a [[checks]] metric is ([[checks]]'s expressions: ``share[bbr]``
    needs a BBR flow in some run, ``share[flow3]`` a fourth flow, ``window.`` an analysis
    window): a metric that no run has would sweep as an empty column without a word."""
    out = []
    for name in metrics:
        whys = []
        for job in jobs:
            s = job.spec
            why = check_expression(
                name,
                {f.cc for f in s.flows},
                s.flow_count(),
                AGGREGATE_KEYS,
                window=s.experiment.analysis is not None,
                windows=set(s.experiment.windows),
                probes=probe_names(s),
            )
            if why is None:
                break
            whys.append(why)
        else:
            if whys:
                out.append(whys[0])
    return out


def run_sweep(
    spec: str | Path | dict | Spec,
    out: Path,
    *,
    workers: int | None = None,
    executor: str = "local",
    overrides: dict[str, Any] | None = None,
    progress: bool = False,
    source: str | None = None,
    quiet: bool = True,
    reports: bool = False,
    pdf: bool = False,
    plots: bool = True,
    csv: bool = True,
    pool: SharedPool | None = None,
) -> pd.DataFrame:
    """Run (or resume) a sweep into ``out``; return the table (one row per run).

    Parameters
    ----------
    spec : path, dict or Spec
        A spec with a ``[sweep]`` table.
    out : Path
        The sweep directory; reusing it resumes the sweep.
    workers : int, optional
        Parallel runs (default: the number of CPUs).
    executor : {"local", "ray"}
        Local process pool, or Ray (``RAY_ADDRESS`` selects a cluster; default: a local
        instance).
    reports : bool
        Draw each computed run's report.png and report.html (off by default, since
        ``tcplab report DIR/runs/<digest>`` draws one from the stored files at any time).
    pdf : bool
        Also each computed run's report.pdf; implies ``reports``. The report files are
        not part of a run's digest: a cached run is reused with or without them.
    plots : bool
        Draw the summary plots and report.html beside table.csv (runs/sweep_table.py
        write_summary). ``tcplab reproduce`` turns them off: it draws its own plots, and
        these cost more CPU than a short entry's runs (benches/RESULTS.md, "Engine speed,
        third step"); ``tcplab report DIR`` draws them from the table at any time.
    csv : bool
        Store each computed run's series, queue and probes as CSV beside their Parquet
        (storage/directory.py write_run). ``tcplab reproduce`` stores Parquet only. Like
        the reports, not part of a run's digest: a cached run is reused either way.
    pool : SharedPool, optional
        Run the jobs on this pool, kept by the caller for many sweeps (``tcplab
        reproduce``), rather than on a pool of the sweep's own; ``workers`` and
        ``executor`` are then the pool's. Not for a real-time backend, whose runs must
        run one at a time (refused).
    table.csv is written in any case.
    """
    reports = reports or pdf
    if isinstance(spec, (str, Path)):
        source = source or str(spec)
        raw = read_toml(spec)
    elif isinstance(spec, Spec):
        raw = spec.to_dict()
    else:
        raw = dict(spec)
    try:
        if overrides:
            raw = apply_overrides(raw, overrides)
        plan = plan_sweep(raw, source)
    except SpecError as err:
        raise (err.with_source(source) if source and not err.source else err) from None
    if executor not in ("local", "ray"):
        raise SpecError(
            [("--executor", f"unknown executor '{executor}'; allowed: local, ray")], source
        )
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise SpecError([("--workers", f"must be a whole number >= 1, got {workers!r}")], source)
    workers = workers or os.cpu_count() or 1
    out = Path(out)
    check_output_dir(out)
    if is_run_dir(out):
        raise SpecError([("-o", f"{out} holds a single run; a sweep needs a directory of its own")])
    if out.is_dir() and any(out.iterdir()) and read_plan_doc(out) is None:
        # A .lock or a sweep.json of the user's does not make a directory a sweep's: only a
        # sweep.json tcplab wrote does (issue: a user's .lock was truncated, files beside it
        # written over).
        raise SpecError(
            [
                (
                    "-o",
                    f"{out} exists and is not a tcplab sweep directory (no sweep.json "
                    "tcplab wrote); choose another",
                )
            ]
        )
    for sub in ("runs", LOCK):
        # `runs` a file made runs.mkdir fail as an internal error.
        if (out / sub).exists() and (out / sub).is_dir() != (sub == "runs"):
            kind = "a directory" if sub == "runs" else "a file"
            raise SpecError(
                [
                    (
                        "-o",
                        f"{out / sub} should be {kind} of tcplab's; move it away or choose another",
                    )
                ]
            )
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        return _run_plan(
            plan, out, workers, executor, progress, quiet, Storing(reports, pdf, csv), plots, pool
        )


LOCK = ".lock"


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on a sweep directory: a second sweep on it is refused
    rather than deleting the first one's work or mixing two grids in one table. The lock
    is the kernel's (flock), so it is released when its holder dies, however it dies."""
    # why: POSIX-only; the module stays importable where flock is missing
    import fcntl

    fh = open(out / LOCK, "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise SpecError(
                [
                    (
                        "-o",
                        f"{out} is in use by another tcplab sweep ({holder}); "
                        "wait for it to finish or choose another directory",
                    )
                ]
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        yield
    finally:
        fh.close()


def _run_plan(
    plan: Plan,
    out: Path,
    workers: int,
    executor: str,
    progress: bool,
    quiet: bool,
    storing: Storing,
    plots: bool = True,
    pool: SharedPool | None = None,
) -> pd.DataFrame:
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(runs)
    clean_stale_tmp(out)
    write_plan(out, plan)
    todo, seen = [], set()
    for job in plan.jobs:
        if job.digest in seen:
            continue
        seen.add(job.digest)
        if _usable_cached(runs / job.digest, quiet):
            continue
        todo.append(job)
    cached = len(plan.jobs) - len(todo)
    say(f"sweep: {len(plan.jobs)} runs, {cached} cached, {len(todo)} to run", quiet)
    bar = None
    if progress:
        # why: start-up time; only when a progress bar is shown
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="run", file=sys.stderr)
    count = [0]

    def report(job: Job) -> None:
        count[0] += 1
        where = ", ".join(f"{k}={v}" for k, v in job.point.items())
        msg = f"done {count[0]}/{len(todo)} {job.digest[:12]} [{where}] seed={job.seed}"
        if bar is not None:
            if not quiet:  # a quiet sweep with a bar (reproduce) shows the bar alone
                bar.write(msg, file=sys.stdout)
                sys.stdout.flush()
            bar.update(1)
        else:
            say(msg, quiet)

    failed: list[tuple[Job, str]] = []
    if any(j.spec is not None and backend_of(j.spec).real_time for j in todo) and workers != 1:
        # Kernel runs take real time and share the CPUs with the emulator: concurrent runs
        # would slow each other's packet handling and change the results.
        if pool is not None:
            raise SpecError(
                [("experiment.backend", "a real-time backend cannot share a process pool")]
            )
        say("sweep: real-time backend: one run at a time", quiet)
        workers = 1
    try:
        if todo and pool is not None:
            failed = pool.run(todo, runs, report, storing)
        elif todo:
            failed = (execute_ray if executor == "ray" else execute_local)(
                todo, runs, workers, report, storing
            )
    except Exception:
        # A full disk or a bug: the runs that finished are stored; tabulate them before
        # giving up, best effort (the disk may be too full even for table.csv).
        with suppress(Exception):
            write_table(out, build_table(out, plan))
        raise
    finally:
        if bar is not None:
            bar.close()
    table = build_table(out, plan)
    if plots:
        write_summary(out, plan, table)
    else:
        write_table(out, table, remove_stale=True)
    if failed:
        lines = [
            f"[{', '.join(f'{k}={v}' for k, v in j.point.items())}] seed={j.seed}: {msg.splitlines()[0]}"
            for j, msg in failed
        ]
        raise EngineError(
            f"{len(failed)} of {len(todo)} runs failed (the others are stored; rerun to retry):\n  "
            + "\n  ".join(lines)
        )
    return table


def _usable_cached(d: Path, quiet: bool) -> bool:
    """Whether the stored run ``d`` can be reused: its manifest is ours and every file
    still has the digest recorded there. A damaged one (no manifest, a file in its place,
    an edited summary.json, a truncated series.parquet) is removed, so that it is
    computed again rather than reported done or read into the table."""
    problem = run_problem(d)
    if problem is None:
        return True
    if problem != "missing":
        say(f"sweep: {d.name[:12]}: {problem}; computing it again", quiet)
        if d.is_dir() and not d.is_symlink():
            shutil.rmtree(d)
        else:
            d.unlink()
    return False


def write_plan(out: Path, plan: Plan) -> None:
    doc = {
        "tcplab_version": __version__,
        "name": plan.name,
        "axes": plan.axes,
        "repeat": plan.repeat,
        "metrics": plan.metrics,
        "runs": [
            {"point": j.point, "repeat": j.repeat, "seed": j.seed, "digest": j.digest}
            for j in plan.jobs
        ],
    }
    _replace_text(out / "sweep.json", json.dumps(doc, indent=1, default=str) + "\n")


def _replace_text(path: Path, text: str) -> None:
    tmp = path.with_name(tmp_prefix(path.name) + "x")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_plan_doc(out: Path) -> dict[str, Any] | None:
    """``out/sweep.json`` if tcplab wrote it (a version, axes, a repeat count and runs
    each with a digest that names a directory under runs/), else None; read through the
    bounded reader."""
    try:
        doc = json.loads(read_bounded(Path(out) / "sweep.json", MAX_MANIFEST_BYTES))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    ok = (
        isinstance(doc, dict)
        and "tcplab_version" in doc
        and isinstance(doc.get("axes"), dict)
        and isinstance(doc.get("repeat"), int)
        and isinstance(doc.get("runs"), list)
        and all(
            isinstance(r, dict) and isinstance(r.get("digest"), str) and _DIGEST.match(r["digest"])
            for r in doc["runs"]
        )
    )
    return doc if ok else None


_DIGEST = re.compile(r"^[0-9A-Za-z_-]+$")


def load_plan(out: Path) -> Plan:
    """The plan stored in ``out/sweep.json`` (jobs without specs), for redrawing."""
    doc = read_plan_doc(out)
    if doc is None:
        raise SpecError([("DIR", f"{out}/sweep.json is not a sweep tcplab wrote")])
    jobs = [Job(r["point"], r["repeat"], r["seed"], None, r["digest"]) for r in doc["runs"]]  # type: ignore[arg-type]
    return Plan(doc["axes"], doc["repeat"], doc["metrics"], jobs, doc.get("name", ""))
