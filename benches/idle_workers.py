"""How long a ``tcplab reproduce`` invocation's workers wait. Not a test: a measurement
whose figures go into benches/RESULTS.md ("Catalogue wall time: idle workers").

    python benches/idle_workers.py reproduce ENTRY... -o /tmp/FRESH_DIR --workers 2 -q

The arguments are the CLI's. Each job's start and end are logged by the worker that runs
it (``runs.executors.run_job`` wrapped before the pool's workers are forked), and the
sweep process's own steps by name (``run_entry``, the sweep's ``plan_sweep``, its
table, the pool's lifetime in ``execute_local`` or ``SharedPool.run``, the report), all
on one wall clock. Printed as JSON on stderr: the wall time from start-up to exit, this
process's CPU and its children's (the workers', once they are joined), the jobs' summed
wall time, the workers' idle fraction ``1 - job time / (workers x wall)``, and where the
idle worker-seconds fall: before the catalogue (imports, loading it), in the report
after it, and in between by what the sweep process was doing (with entries overlapped,
the innermost step of any thread, in the order listed under "idle_by_step"). Works on
main's tree too (the names it wraps are looked up, and skipped where missing). Use a
fresh output directory each time: it is a cache.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import threading
import time
from typing import Any

T0 = time.time()
LOG = tempfile.NamedTemporaryFile(prefix="idle-workers-", suffix=".jsonl", delete=False).name
_fd = os.open(LOG, os.O_WRONLY | os.O_APPEND)


def _log(doc: dict[str, Any]) -> None:
    os.write(_fd, (json.dumps(doc) + "\n").encode())  # one write: whole lines under O_APPEND


def wrap_job(module: Any) -> None:
    """The worker's job, logged from inside the worker; picklable by reference (the pool
    pickles the function by its module and name, and the forked worker finds this one)."""
    f = module.run_job

    def run_job(*a: Any, **k: Any) -> Any:
        t = time.time()
        try:
            return f(*a, **k)
        finally:
            _log({"job": os.getpid(), "start": t, "end": time.time()})

    run_job.__module__, run_job.__qualname__ = f.__module__, f.__qualname__
    module.run_job = run_job


def wrap_step(owner: Any, name: str, label: str) -> None:
    f = getattr(owner, name, None)
    if f is None:
        return

    def timed(*a: Any, **k: Any) -> Any:
        t = time.time()
        try:
            return f(*a, **k)
        finally:
            _log(
                {
                    "step": label,
                    "thread": threading.get_ident(),
                    "start": t,
                    "end": time.time(),
                }
            )

    setattr(owner, name, timed)


ORDER = [
    "report",
    "plots",
    "pool (a sweep's runs)",
    "plan",
    "table",
    "entry (judging, cache checks)",
]


def analyse(workers: int, t_end: float) -> dict[str, Any]:
    jobs, steps = [], []
    with open(LOG) as fh:
        for line in fh:
            d = json.loads(line)
            (jobs if "job" in d else steps).append(d)
    wall = t_end - T0
    busy = sum(j["end"] - j["start"] for j in jobs)
    # Sweep the time line: at each instant, how many jobs run and which steps are open.
    edges = sorted(
        [(j["start"], 1, None) for j in jobs]
        + [(j["end"], -1, None) for j in jobs]
        + [(s["start"], 0, ("+", s["step"])) for s in steps]
        + [(s["end"], 0, ("-", s["step"])) for s in steps]
    )
    running, open_steps = 0, {k: 0 for k in ORDER + ["catalogue"]}
    idle: dict[str, float] = {}
    last = T0
    cat = [s for s in steps if s["step"] == "catalogue"]
    cat_end = max((s["end"] for s in cat), default=t_end)
    for t, dj, step in edges + [(t_end, 0, None)]:
        gap = (workers - running) * (t - last)
        if gap > 0:
            if open_steps["report"]:
                where = "report"
            elif not open_steps["catalogue"]:
                where = "before the catalogue" if last < cat_end else "after the report"
            else:
                where = next((k for k in ORDER if open_steps[k]), "between steps")
                if where == "pool (a sweep's runs)":
                    where += ": no job" if running == 0 else ": fewer jobs than workers"
            idle[where] = idle.get(where, 0.0) + gap
        last = t
        running += dj
        if step is not None:
            open_steps[step[1]] += 1 if step[0] == "+" else -1
    times = os.times()
    return {
        "wall_s": round(wall, 2),
        "cpu_self_s": round(times.user + times.system, 2),
        "cpu_children_s": round(times.children_user + times.children_system, 2),
        "jobs": len(jobs),
        "job_wall_s": round(busy, 2),
        "workers": workers,
        "idle_fraction": round(1 - busy / (workers * wall), 4),
        "idle_worker_s": round(workers * wall - busy, 2),
        "idle_by_step": {k: round(v, 2) for k, v in sorted(idle.items(), key=lambda x: -x[1])},
        "worker_pids": len({j["job"] for j in jobs}),
        "log": LOG,
    }


def main() -> None:
    import tcplab.reproduce as reproduce
    import tcplab.reproduce.runner as runner
    import tcplab.runs.executors as executors
    import tcplab.runs.sweep as sweep

    wrap_job(executors)
    wrap_step(reproduce, "run_catalogue", "catalogue")  # imported there by name
    wrap_step(runner, "run_entry", "entry (judging, cache checks)")
    wrap_step(sweep, "plan_sweep", "plan")
    wrap_step(runner, "plan_sweep", "plan")
    wrap_step(sweep, "build_table", "table")
    wrap_step(sweep, "write_table", "table")
    wrap_step(sweep, "execute_local", "pool (a sweep's runs)")  # imported there by name
    if hasattr(executors, "SharedPool"):
        wrap_step(executors.SharedPool, "run", "pool (a sweep's runs)")
    wrap_step(reproduce, "write_report", "report")
    wrap_step(reproduce, "draw_plots", "plots")  # drawn per entry, where the tree does
    argv = sys.argv[1:]
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else os.cpu_count()
    sys.argv = ["tcplab"] + argv
    try:
        runpy.run_module("tcplab", run_name="__main__")
    except SystemExit:
        pass
    print(json.dumps(analyse(workers or 1, time.time()), indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
