"""Running one resolved spec on its backend into an in-memory :class:`Result`: the step
``tcplab run``, the Python API and every sweep worker share."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tcplab import preset_file
from tcplab.analysis.rundata import from_engine
from tcplab.analysis.summary import flow_metrics, summarize
from tcplab.backends import backend_of
from tcplab.errors import SpecError
from tcplab.lowering import resolve, world_config
from tcplab.runs.result import Result
from tcplab.specs.model import Spec


def execute(
    spec: Spec, progress: Callable[[float], None] | None = None
) -> tuple[Result, dict[str, Any], float]:
    """Resolve and run one spec on its backend (``experiment.backend``); return the
    in-memory result, the engine config and the wall time of the run alone (s)."""
    refused = preset_file.refuse(spec, preset_file.SWEEP_REFUSES)
    if refused:  # `tcplab run` and tcplab.run take tcplab.gym.preset_run's path instead
        raise SpecError(refused)
    resolved = resolve(spec)
    config = world_config(resolved)
    t0 = time.perf_counter()
    raw, extra = backend_of(resolved).run(resolved, config, progress)
    data = from_engine(resolved, raw)
    data.extra.update(extra)
    summary = summarize(data)
    per_flow = flow_metrics(data)
    result = Result(
        resolved, data.series, data.queue, per_flow, summary["aggregate"], summary, run=data
    )
    return result, config, time.perf_counter() - t0
