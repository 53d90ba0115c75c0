"""Where a ``tcplab reproduce`` invocation's CPU time goes, one worker. Not a test: a
measurement whose figures go into benches/RESULTS.md ("Engine speed, third step").

    python benches/catalogue_split.py reproduce ENTRY -o /tmp/FRESH_DIR --workers 1 -q

The arguments are the CLI's. With ``--workers 1`` every run executes in this process, so
each step's ``time.process_time()`` is summed by wrapping the functions the pipeline
calls by name (a step nested in another is subtracted from it): the engine
(``SimBackend.run``: the Rust run and its result handed to Python), the steps before it
(``resolve``, ``world_config``, the worker's ``parse_spec``), the analysis after it
(``from_engine``, ``summarize``, ``flow_metrics``), the files (``store_run``, of which
``_write_frame``: Parquet and CSV), and per sweep the plan, cache checks, table and the
sweep's summary plots. Printed as JSON on stderr with the CPU of start-up imports, of
child processes (git) and what is left (reproduce's judging, its report and plots).
The code before a change is timed by putting its python/ tree first on PYTHONPATH (the
compiled engine copied into it): the wrapped names are the same there. Use a fresh
output directory each time: it is a cache.
"""

from __future__ import annotations

import collections
import json
import os
import runpy
import sys
import time
from typing import Any

acc: dict[str, float] = collections.defaultdict(float)
cnt: collections.Counter[str] = collections.Counter()
stack: list[float] = []


def wrap(owner: Any, name: str, label: str) -> None:
    f = getattr(owner, name)

    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        stack.append(0.0)
        try:
            return f(*a, **k)
        finally:
            dt = time.process_time() - t0
            inner = stack.pop()
            acc[label] += dt - inner
            cnt[label] += 1
            if stack:
                stack[-1] += dt

    setattr(owner, name, timed)


def main() -> None:
    t_start = time.process_time()
    import tcplab.backends as backends
    import tcplab.reproduce.runner as runner
    import tcplab.runs.execute as execute
    import tcplab.runs.executors as executors
    import tcplab.runs.sweep as sweep
    import tcplab.storage.directory as directory

    t_import = time.process_time() - t_start
    wrap(backends.SimBackend, "run", "engine (backend run)")
    wrap(execute, "from_engine", "after: from_engine")
    wrap(execute, "summarize", "after: summarize")
    wrap(execute, "flow_metrics", "after: flow_metrics")
    wrap(execute, "resolve", "before: resolve")
    wrap(execute, "world_config", "before: world_config")
    wrap(executors, "parse_spec", "before: parse_spec (worker)")
    wrap(executors, "store_run", "after: store_run (write files)")
    wrap(directory, "git_commit", "after: git_commit")
    wrap(directory, "_write_frame", "after: parquet+csv")
    wrap(executors, "run_job", "job other")
    wrap(sweep, "plan_sweep", "plan_sweep (main)")
    wrap(sweep, "write_summary", "sweep plots+html")
    wrap(sweep, "build_table", "sweep table read")
    wrap(sweep, "_usable_cached", "cache check")
    wrap(runner, "_finished", "cache check")
    wrap(runner, "_damaged", "cache check")
    wrap(runner, "plan_sweep", "plan_sweep (main)")
    wrap(runner, "run_sweep", "sweep other")
    sys.argv = ["tcplab"] + sys.argv[1:]
    try:
        runpy.run_module("tcplab", run_name="__main__")
    except SystemExit:
        pass
    total = time.process_time() - t_start
    times = os.times()
    doc = {
        "total_cpu": round(total, 3),
        "children_cpu": round(times.children_user + times.children_system, 3),
        "imports_at_start": round(t_import, 3),
        "steps": {k: [round(v, 3), cnt[k]] for k, v in sorted(acc.items(), key=lambda x: -x[1])},
        "rest": round(total - sum(acc.values()) - t_import, 3),
    }
    print(json.dumps(doc, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
