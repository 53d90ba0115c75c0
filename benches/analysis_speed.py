"""How long the analysis of a run takes against its simulation (at most 10 % of
the engine's time at 1000 flows). Not a test: a measurement whose figures go into
benches/RESULTS.md.

    python benches/analysis_speed.py [--flows 100 1000] [--repeat 3]

Each run: a 10 Gbit/s bottleneck (5 ms one way, a 1 BDP buffer), 2 s, half the flows BBR
and half CUBIC (40 ms RTT, starts staggered by 1 ms), samples every 100 ms (the default).
The steps are those of ``tcplab run`` (runs/execute.py): the engine (``backend.run``),
then the analysis, timed apart: ``from_engine`` (the raw result as DataFrames),
``summarize`` (summary.json) and ``flow_metrics`` (the per-flow table a Result carries;
execute.py computes it a second time after ``summarize``). Each figure is wall time and
this process's CPU time (``time.process_time``), which other processes on a shared
machine do not inflate; ``--repeat`` runs of each size, each from the engine on.

The code before the per-flow rewrite is timed by putting its python/ tree first on the path (the
compiled engine copied into it): the steps' names are the same there.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import tcplab
from tcplab.runs.execute import (  # the steps execute() runs, by the names it uses
    backend_of,
    flow_metrics,
    from_engine,
    resolve,
    summarize,
    world_config,
)
from tcplab.specs.load import parse_spec


def spec_of(n: int) -> dict[str, Any]:
    return {
        "experiment": {"name": f"analysis bench: {n} flows", "duration": "2s", "seed": 1},
        "bottleneck": {"rate": "10Gbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [
            {"cc": cc, "rtt": "40ms", "count": n // 2, "stagger": "1ms"} for cc in ("bbr", "cubic")
        ],
    }


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(t0: tuple[float, float]) -> tuple[float, float]:
    w, c = clock()
    return w - t0[0], c - t0[1]


def one(n: int) -> dict[str, tuple[float, float]]:
    resolved = resolve(parse_spec(spec_of(n)))
    config = world_config(resolved)
    t = clock()
    raw, extra = backend_of(resolved).run(resolved, config, None)
    out = {"engine": since(t)}
    t = clock()
    data = from_engine(resolved, raw)
    data.extra.update(extra)
    out["from_engine"] = since(t)
    t = clock()
    summarize(data)
    out["summarize"] = since(t)
    t = clock()
    flow_metrics(data)
    out["flow_metrics"] = since(t)
    out["analysis"] = tuple(  # type: ignore[assignment]
        sum(out[k][i] for k in ("from_engine", "summarize", "flow_metrics")) for i in (0, 1)
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"tcplab {tcplab.__version__} from {tcplab.__file__}")
    steps = ["engine", "from_engine", "summarize", "flow_metrics", "analysis"]
    for n in args.flows:
        runs = [one(n) for _ in range(args.repeat)]
        print(f"\n{n} flows, {args.repeat} runs (wall s / CPU s each):")
        for step in steps:
            cells = ", ".join(f"{r[step][0]:.3f} / {r[step][1]:.3f}" for r in runs)
            print(f"  {step:<13} {cells}")
        ratio = [r["analysis"][1] / r["engine"][1] for r in runs]
        print(
            "  analysis / engine (CPU): "
            + ", ".join(f"{x:.1%}" for x in ratio)
            + f"  (median {statistics.median(ratio):.1%})"
        )


if __name__ == "__main__":
    main()
