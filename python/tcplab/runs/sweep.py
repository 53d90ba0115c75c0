"""Parameter sweeps: a grid over any spec paths, K seeds per point, a content-addressed
cache and resume.

The ``[sweep]`` table of a spec::

    [sweep]
    repeat = 3                                  # seeds experiment.seed, +1, +2
    "bottleneck.buffer" = ["0.5bdp", "1bdp", "5bdp"]
    "flows[0].cc" = ["bbr", "cubic"]
    metrics = ["jain_index", "utilization"]     # optional: what the summary plots show

Every run is stored in ``DIR/runs/<digest>/`` where the digest is the sha256 of the
engine config it runs (which holds the seed and every resolved quantity) and the tcplab
version. A run directory appears atomically when complete, so after a kill the sweep
resumes by skipping every digest already present: a finished run is never recomputed or
lost. ``DIR/table.csv`` (and ``.parquet``) has one row per run; ``DIR/summary_<axis>.png``
plots each metric against each swept parameter with error bars over seeds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab import __version__
from tcplab.backends import backend_of
from tcplab.backends.sim import config_json, resolve, world_config
from tcplab.errors import EngineError, SpecError
from tcplab.metric_table import AGGREGATE_KEYS, SWEEP_DEFAULT
from tcplab.runs.directory import (
    atomic_dir,
    check_output_dir,
    clean_stale_tmp,
    is_run_dir,
    tmp_prefix,
)
from tcplab.spec.limits import MAX_SWEEP_RUNS
from tcplab.spec.model import Spec, apply_overrides, parse_spec, read_toml
from tcplab.spec.paths import check_path, expand_path, parse_path

RESERVED = ("repeat", "metrics")
SEED_LIMIT = 2**63  # experiment.seed's bound (spec.py)
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
    """A validated sweep: its axes (path -> values), repeat count, metrics and jobs."""

    axes: dict[str, list[Any]]
    repeat: int
    metrics: list[str]
    jobs: list[Job]


def run_digest(spec: Spec) -> str:
    """sha256 of everything a stored run's files depend on: the tcplab version, the engine
    config (resolved spec + seed), the resolved spec itself (what the analysis reads:
    ``[experiment] analysis`` and ``windows``, flow groups, checks) and the backend's tag
    (a kernel run of the same config is a different run). A cached run is reused only
    when all of them are equal, so no result computed under other settings is served."""
    spec_text = json.dumps(spec.to_dict(), sort_keys=True, separators=(",", ":"))
    text = (
        f"tcplab {__version__}\n{config_json(world_config(spec))}\n{spec_text}"
        f"{backend_of(spec).digest_tag()}"
    )
    return hashlib.sha256(text.encode()).hexdigest()


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
    for name in metrics:
        if name not in AGGREGATE_KEYS and not re.fullmatch(
            r"(share|share_minus_fair_share)\[[\w.-]+\]|"
            r"goodput_bps\[flow\d+\]",
            name,
        ):
            problems.append(
                (
                    "sweep.metrics",
                    f"unknown metric '{name}'; known: {', '.join(AGGREGATE_KEYS)}, "
                    "share[<cc>], share_minus_fair_share[<cc>], goodput_bps[flow<N>]",
                )
            )
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
    return Plan(axes, repeat, list(metrics), jobs)


# ---------------------------------------------------------------------------- running


def _run_job(
    spec_dict: dict[str, Any], out_dir: str, report: bool = False, pdf: bool = False
) -> str:
    """Run one job into ``out_dir`` (atomic); a worker-process entry point."""
    from tcplab.runs.directory import write_run
    from tcplab.runs.execute import execute

    spec = parse_spec(spec_dict, check_algorithms=False)
    result, config, wall = execute(spec)
    try:
        write_run(result, out_dir, config, wall, replace=False, report=report, pdf=pdf)
    except FileExistsError:
        pass  # another worker finished the same digest first
    return out_dir


def _run_job_files(
    spec_dict: dict[str, Any], report: bool = False, pdf: bool = False
) -> dict[str, bytes]:
    """Run one job and return its files' bytes (for executors without a shared disk)."""
    tmp = tempfile.mkdtemp(prefix="tcplab-job-")
    try:
        out = os.path.join(tmp, "run")
        _run_job(spec_dict, out, report, pdf)
        return {name: Path(out, name).read_bytes() for name in os.listdir(out)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, flush=True)


def _die_with_parent() -> None:
    """Worker initializer: a worker ends when the sweep's main process does, even if that
    one is killed with SIGKILL and cannot shut its pool down. On Linux the kernel sends
    SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG); elsewhere, and as a second
    guard, a thread ends the worker once it has been re-parented."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1 (include/uapi/linux/prctl.h)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="tcplab-parent-watch", daemon=True).start()


def _execute_local(
    todo: list[Job],
    runs: Path,
    workers: int,
    report: Callable[[Job], None],
    reports: bool,
    pdf: bool = False,
) -> list[tuple[Job, str]]:
    """Run jobs on local processes; a failing run is recorded, the others go on."""
    failed: list[tuple[Job, str]] = []
    if workers <= 1:
        for job in todo:
            try:
                _run_job(job.spec.to_dict(), str(runs / job.digest), reports, pdf)
            except (SpecError, RuntimeError) as exc:
                failed.append((job, str(exc)))
                continue
            report(job)
        return failed
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_die_with_parent)
    try:
        pending = {
            pool.submit(_run_job, j.spec.to_dict(), str(runs / j.digest), reports, pdf): j
            for j in todo
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                job = pending.pop(fut)
                exc = fut.exception()
                if exc is not None:
                    failed.append((job, f"{type(exc).__name__}: {exc}"))
                    continue
                report(job)
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return failed


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once (SIGTERM or Ctrl-C in the sweep): drop the queued runs and kill
    the running ones. Leaving the ``with`` block would instead wait for every queued run
    (issue 21). Finished runs are already stored; a killed run leaves only a temporary
    named with its pid, which the next sweep removes (runs/directory.py clean_stale_tmp).
    SIGKILL, not SIGTERM: a worker forked from the CLI would turn SIGTERM into an
    exception in the job and go on to the next one."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.kill()
        except (OSError, AttributeError):
            pass
    for p in procs:
        p.join(timeout=5)


def _execute_ray(
    todo: list[Job],
    runs: Path,
    workers: int,
    report: Callable[[Job], None],
    reports: bool,
    pdf: bool = False,
) -> list[tuple[Job, str]]:
    """Run jobs as Ray tasks; workers return the run's files, written here atomically, so
    the cluster needs no shared disk."""
    failed: list[tuple[Job, str]] = []
    try:
        import ray
    except ImportError:
        raise RuntimeError("--executor ray needs Ray: pip install 'tcplab[ray]'") from None
    started = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if not address:
            # A local instance: one task slot per worker, and a small object store (each
            # task returns one run's files, a few MB, fetched as soon as it is ready).
            kwargs["num_cpus"] = max(1, workers)
            kwargs["object_store_memory"] = 200 * 1024 * 1024
        ray.init(address=address, **kwargs)
        started = True
    try:
        remote = ray.remote(_run_job_files)
        pending = {remote.remote(j.spec.to_dict(), reports, pdf): j for j in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                job = pending.pop(ref)
                try:
                    files = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a task failure, reported with the others
                    failed.append((job, f"{type(exc).__name__}: {exc}"))
                    continue
                try:
                    with atomic_dir(runs / job.digest) as tmp:
                        for name, data in files.items():
                            (tmp / name).write_bytes(data)
                except FileExistsError:
                    pass
                report(job)
    finally:
        if started:
            ray.shutdown()
    return failed


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
    if (
        out.is_dir()
        and any(out.iterdir())
        and not (out / "sweep.json").is_file()
        and not (out / LOCK).exists()
    ):
        raise SpecError(
            [("-o", f"{out} exists and is not a tcplab sweep directory; choose another")]
        )
    for sub in ("runs", LOCK):
        # `runs` a file made runs.mkdir fail as an internal error (issue 21).
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
        return _run_plan(plan, out, workers, executor, progress, quiet, reports, pdf)


LOCK = ".lock"


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on a sweep directory: a second sweep on it is refused
    rather than deleting the first one's work or mixing two grids in one table. The lock
    is the kernel's (flock), so it is released when its holder dies, however it dies."""
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
    reports: bool,
    pdf: bool = False,
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
    _say(f"sweep: {len(plan.jobs)} runs, {cached} cached, {len(todo)} to run", quiet)
    bar = None
    if progress:
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
            _say(msg, quiet)

    failed: list[tuple[Job, str]] = []
    if any(j.spec is not None and backend_of(j.spec).real_time for j in todo) and workers != 1:
        # Kernel runs take real time and share the CPUs with the emulator: concurrent runs
        # would slow each other's packet handling and change the results.
        _say("sweep: real-time backend: one run at a time", quiet)
        workers = 1
    try:
        if todo:
            failed = (_execute_ray if executor == "ray" else _execute_local)(
                todo, runs, workers, report, reports, pdf
            )
    except Exception:
        # A full disk or a bug: the runs that finished are stored; tabulate them before
        # giving up, best effort (the disk may be too full even for table.csv).
        with suppress(Exception):
            build_table(out, plan)
        raise
    finally:
        if bar is not None:
            bar.close()
    table = build_table(out, plan)
    write_summary(out, plan, table)
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
    from tcplab.runs.ownership import run_problem

    problem = run_problem(d)
    if problem is None:
        return True
    if problem != "missing":
        _say(f"sweep: {d.name[:12]}: {problem}; computing it again", quiet)
        if d.is_dir() and not d.is_symlink():
            shutil.rmtree(d)
        else:
            d.unlink()
    return False


def write_plan(out: Path, plan: Plan) -> None:
    doc = {
        "tcplab_version": __version__,
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


def load_plan(out: Path) -> Plan:
    """The plan stored in ``out/sweep.json`` (jobs without specs), for redrawing."""
    doc = json.loads((Path(out) / "sweep.json").read_text())
    jobs = [Job(r["point"], r["repeat"], r["seed"], None, r["digest"]) for r in doc["runs"]]  # type: ignore[arg-type]
    return Plan(doc["axes"], doc["repeat"], doc["metrics"], jobs)


def build_table(out: Path, plan: Plan) -> pd.DataFrame:
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


def write_summary(out: Path, plan: Plan, table: pd.DataFrame) -> list[Path]:
    """Summary plots: for each swept parameter, the algorithms' shares and each metric's
    mean over seeds with 95 % confidence intervals, one line per combination of the other
    parameters (report/sweep_plots.py); and the interactive report.html (report/html.py)."""
    from tcplab.report.html import write_sweep_html
    from tcplab.report.sweep_plots import plot_axis

    paths = []
    for axis in plan.axes:
        paths.append(plot_axis(Path(out), plan, table, axis))
    paths.append(write_sweep_html(Path(out), plan, table))
    return paths
