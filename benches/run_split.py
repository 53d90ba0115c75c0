"""Per-run CPU split of single catalogue runs, in one process. Not a test: a measurement
whose figures go into benches/RESULTS.md ("Engine speed, third step").

    python benches/run_split.py tum-fig12-flowcount-buffer-matrix:0,7,40 acd-table2-testbed:0

For each ENTRY:k (k: jobs of the entry's first-pass sweep, in plan order), the CPU time
(``time.process_time``) of the steps a sweep worker runs (runs/executors.py run_job):
before (``parse_spec``, ``resolve``, ``world_config``), the engine (the backend's run),
the analysis (``from_engine``, ``summarize``, ``flow_metrics``) and the files
(``store_run`` into a temporary directory, without report). One JSON line per run. Run
from the repository root (the catalogue is experiments/papers).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tcplab.analysis.rundata import from_engine
from tcplab.analysis.summary import flow_metrics, summarize
from tcplab.backends import backend_of
from tcplab.lowering import resolve, world_config
from tcplab.reproduce.catalogue import load_catalogue
from tcplab.reproduce.runner import entry_spec
from tcplab.runs.result import Result, Storing, store_run
from tcplab.runs.sweep import plan_sweep
from tcplab.specs.load import parse_spec


def main() -> None:
    clock = time.process_time
    cat = {e.name: e for e in load_catalogue(Path("experiments/papers"))}
    for arg in sys.argv[1:]:
        name, _, ks = arg.partition(":")
        plan = plan_sweep(entry_spec(cat[name], False), name)
        for k in [int(x) for x in ks.split(",")] if ks else [0]:
            job = plan.jobs[k % len(plan.jobs)]
            t0 = clock()
            spec = resolve(parse_spec(job.spec.to_dict(), check_algorithms=False))
            cfg = world_config(spec)
            t1 = clock()
            raw, extra = backend_of(spec).run(spec, cfg, None)
            t2 = clock()
            data = from_engine(spec, raw)
            data.extra.update(extra)
            summary = summarize(data)
            per_flow = flow_metrics(data)
            res = Result(
                spec, data.series, data.queue, per_flow, summary["aggregate"], summary, run=data
            )
            t3 = clock()
            tmp = tempfile.mkdtemp()
            try:
                store_run(res, Path(tmp) / "run", cfg, 0.0, replace=False, storing=Storing())
            finally:
                t4 = clock()
                shutil.rmtree(tmp, ignore_errors=True)
            line = {
                "entry": name,
                "job": k,
                "flows": len(data.flows),
                "series_rows": len(data.series),
                "duration_s": spec.experiment.duration / 1e9,
                "before": round(t1 - t0, 4),
                "engine": round(t2 - t1, 4),
                "analysis": round(t3 - t2, 4),
                "files": round(t4 - t3, 4),
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
