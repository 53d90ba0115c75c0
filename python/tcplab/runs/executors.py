"""Where a sweep's runs execute: a local process pool (:func:`execute_local`, workers that
end with the sweep's process; or a :class:`SharedPool` kept for many sweeps, as ``tcplab
reproduce`` keeps one for the whole catalogue) or Ray (:func:`execute_ray`, the run's files
shipped back); each worker runs one job (runs/sweep.py Job) into its content-addressed
directory (:func:`run_job`)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError
from tcplab.runs.execute import execute
from tcplab.runs.result import DATA_ONLY, Storing, store_run
from tcplab.specs.load import parse_spec
from tcplab.storage.directory import git_commit
from tcplab.storage.files import atomic_dir


def run_job(spec_dict: dict[str, Any], out_dir: str, storing: Storing = DATA_ONLY) -> str:
    """Run one job into ``out_dir`` (atomic); a worker-process entry point. ``storing``:
    what the run keeps beside its data, with the git commit the sweep runs from, asked
    once by :func:`execute_local` for all its jobs (left unknown, git is asked for this
    run: on another machine, Ray's)."""
    spec = parse_spec(spec_dict, check_algorithms=False)
    result, config, wall = execute(spec)
    try:
        store_run(result, out_dir, config, wall, replace=False, storing=storing)
    except FileExistsError:
        pass  # another worker finished the same digest first
    return out_dir


def run_job_files(spec_dict: dict[str, Any], storing: Storing = DATA_ONLY) -> dict[str, bytes]:
    """Run one job and return its files' bytes (for executors without a shared disk)."""
    tmp = tempfile.mkdtemp(prefix="tcplab-job-")
    try:
        out = os.path.join(tmp, "run")
        run_job(spec_dict, out, storing)
        return {name: Path(out, name).read_bytes() for name in os.listdir(out)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def say(msg: str, quiet: bool) -> None:
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
            # why: used only on Linux, for prctl(PR_SET_PDEATHSIG)
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


def execute_local(
    todo: list[Any],
    runs: Path,
    workers: int,
    report: Callable[[Any], None],
    storing: Storing = DATA_ONLY,
) -> list[tuple[Any, str]]:
    """Run jobs on local processes; a failing run is recorded, the others go on."""
    failed: list[tuple[Any, str]] = []
    # The workers run this process's code (forked from it, or started from the same
    # tree): one commit for the sweep, not two git processes per run.
    storing = replace(storing, commit=git_commit())
    if workers <= 1:
        for job in todo:
            try:
                run_job(job.spec.to_dict(), str(runs / job.digest), storing)
            except (SpecError, RuntimeError) as exc:
                failed.append((job, str(exc)))
                continue
            report(job)
        return failed
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_die_with_parent)
    try:
        _submit_and_wait(pool, todo, runs, report, storing, failed)
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return failed


def _submit_and_wait(
    pool: ProcessPoolExecutor,
    todo: list[Any],
    runs: Path,
    report: Callable[[Any], None],
    storing: Storing,
    failed: list[tuple[Any, str]],
    stopped: threading.Event | None = None,
) -> None:
    """Queue every job on ``pool`` and wait for them all; a failing run is recorded in
    ``failed``, the others go on. Interrupted (Ctrl-C, or ``stopped`` set by the thread
    that stopped a shared pool: a killed pool's futures are not all resolved), the jobs
    still queued are dropped before the exception goes on."""
    pending = {
        pool.submit(run_job, j.spec.to_dict(), str(runs / j.digest), storing): j for j in todo
    }
    try:
        while pending:
            if stopped is not None and stopped.is_set():
                raise RuntimeError("the sweep's process pool was stopped")
            wait_s = None if stopped is None else 0.5
            done, _ = wait(pending, timeout=wait_s, return_when=FIRST_COMPLETED)
            for fut in done:
                job = pending.pop(fut)
                exc = fut.exception()
                if exc is not None:
                    failed.append((job, f"{type(exc).__name__}: {exc}"))
                    continue
                report(job)
    except BaseException:
        for fut in pending:
            fut.cancel()
        raise


class SharedPool:
    """One local process pool for many sweeps, run from several threads at once (``tcplab
    reproduce``: every entry's first pass, extra seeds and controls). A pool per sweep left
    a worker idle at each sweep's end, while the last run finished, and both idle while the
    sweep's process planned, tabulated and judged between pools (benches/RESULTS.md,
    "Catalogue wall time: idle workers"); with one pool, another entry's runs fill those
    gaps. The runs are the same: each job is a spec in, a content-addressed directory out.

    The workers are started here, from the thread that makes the pool, before any other
    thread of the caller's exists: with the fork start method (Linux's default) a process
    forked while another thread holds a lock would inherit the lock held. Use as a context
    manager: leaving it normally waits for the workers to end; leaving it by an exception
    (Ctrl-C, a failed entry) kills them at once, queued runs dropped (:func:`_stop_pool`)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._stopped = threading.Event()
        self._pool = ProcessPoolExecutor(max_workers=workers, initializer=_die_with_parent)
        try:
            self._pool.submit(os.getpid).result()  # forks every worker now (see above)
        except BaseException:
            _stop_pool(self._pool)
            raise

    def run(
        self,
        todo: list[Any],
        runs: Path,
        report: Callable[[Any], None],
        storing: Storing = DATA_ONLY,
    ) -> list[tuple[Any, str]]:
        """Run one sweep's jobs on the pool (as :func:`execute_local` does on a pool of its
        own); a failing run is recorded, the others go on."""
        failed: list[tuple[Any, str]] = []
        # git asked once per sweep, as execute_local does
        storing = replace(storing, commit=git_commit())
        if self._stopped.is_set():
            raise RuntimeError("the sweep's process pool was stopped")
        _submit_and_wait(self._pool, todo, runs, report, storing, failed, self._stopped)
        return failed

    def stop(self) -> None:
        """Kill the workers at once (idempotent); any thread waiting on a run then fails."""
        self._stopped.set()
        _stop_pool(self._pool)

    def __enter__(self) -> SharedPool:
        return self

    def __exit__(self, kind: type | None, *_: Any) -> None:
        if kind is None:
            self._pool.shutdown(wait=True)
        else:
            self.stop()


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once (SIGTERM or Ctrl-C in the sweep): drop the queued runs and kill
    the running ones. Leaving the ``with`` block would instead wait for every queued run.
    Finished runs are already stored; a killed run leaves only a temporary
    named with its pid, which the next sweep removes (storage/files.py clean_stale_tmp).
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


def execute_ray(
    todo: list[Any],
    runs: Path,
    workers: int,
    report: Callable[[Any], None],
    storing: Storing = DATA_ONLY,
) -> list[tuple[Any, str]]:
    """Run jobs as Ray tasks; workers return the run's files, written here atomically, so
    the cluster needs no shared disk."""
    failed: list[tuple[Any, str]] = []
    try:
        # why: ray is an optional, heavy dependency (the ray executor only)
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
        remote = ray.remote(run_job_files)
        pending = {remote.remote(j.spec.to_dict(), storing): j for j in todo}
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
