"""A stand-in for ``tcplab._engine`` with the binding's interface, for tests of the
Python plumbing (spec checks, CLI, sweep cache) that must not depend on simulator
behaviour. Its numbers are simple and deterministic: the bottleneck rate is shared
equally among the active flows. What it writes is the engine's contract, not a copy of
it: the counters are the fields the exported schema requires (engine_schema.json), the
series columns those the compiled engine announces for the config (series_columns)."""

from __future__ import annotations

import json

# The compiled engine, bound before the fake_engine fixture puts this module in its place.
from tcplab import _engine as _real_engine

CALLS = {"run": 0}


def _real_param(cc: str, name: str) -> dict:
    """A parameter of the compiled engine's algorithm, as it describes it."""
    algo = next(a for a in _real_engine.algorithms() if a["name"] == cc)
    return next(p for p in algo["params"] if p["name"] == name)


ALGOS = [
    {"name": "reno", "family": "loss", "summary": "Reno", "source": "RFC 5681", "params": []},
    {
        "name": "cubic",
        "family": "loss",
        "summary": "CUBIC",
        "source": "tcp_cubic.c",
        "params": [
            {
                "name": "beta",
                "kind": "float",
                "default": 0.7,
                "min": 0.0,
                "max": 1.0,
                "doc": "decrease factor",
            },
            {
                "name": "fast_convergence",
                "kind": "bool",
                "default": 1.0,
                "min": 0.0,
                "max": 1.0,
                "doc": "flag",
            },
        ],
    },
    {
        "name": "bbr",
        "family": "bbr",
        "summary": "BBR v1",
        "source": "tcp_bbr.c",
        "params": [
            {
                "name": "cwnd_gain",
                "kind": "float",
                "default": 2.0,
                "min": 0.1,
                "max": 10.0,
                "doc": "cwnd gain",
            },
            {
                "name": "probe_rtt_ms",
                "kind": "int",
                "default": 200,
                "min": 1,
                "max": 10000,
                "doc": "ms",
            },
            # The engine's own: the choice `[tcp] kernel` is written into (world_config).
            _real_param("bbr", "kernel"),
        ],
    },
]


def algorithms() -> list:
    return ALGOS


def schema() -> str:
    """The real engine's exported contract, as committed (tests/specs/test_schema.py keeps the
    file equal to the engine's export)."""
    from tcplab.specs.contract import SCHEMA_FILE

    return SCHEMA_FILE.read_text()


def check_params(cc: str, params_json: str):
    """A small stand-in for the engine's registry check: names and ranges only."""
    algo = next((a for a in ALGOS if a["name"] == cc), None)
    if algo is None:
        known = ", ".join(a["name"] for a in ALGOS)
        return ("cc", f"unknown algorithm '{cc}'; known: {known}")
    for key, value in json.loads(params_json).items():
        p = next((q for q in algo["params"] if q["name"] == key), None)
        if p is None:
            known = ", ".join(q["name"] for q in algo["params"])
            return (f"params.{key}", f"unknown parameter '{key}' for {cc}; known: {known}")
        if p["kind"] == "bool" and not isinstance(value, bool):
            return (f"params.{key}", f"parameter '{key}' of {cc}: expected true or false")
        if p["kind"] != "bool" and not p["min"] <= value <= p["max"]:
            lo, hi = (f"{x:g}" for x in (p["min"], p["max"]))
            return (
                f"params.{key}",
                f"parameter '{key}' of {cc}: {value} is outside the allowed range [{lo}, {hi}]",
            )
    return None


def validate(config_json: str) -> None:
    cfg = json.loads(config_json)
    if cfg["bottleneck"]["rate_bps"] <= 0:
        raise ValueError("bottleneck.rate_bps: must be > 0")


def _schema_defs() -> dict:
    return json.loads(schema())["run_output"]["$defs"]


def _required(name: str) -> list[str]:
    """The fields the engine's ``RunOutput`` always writes for ``name`` (FlowCounters,
    QueueReport), from its exported JSON Schema."""
    return list(_schema_defs()[name]["required"])


def series_columns(config_json: str) -> list[tuple[str, str]]:
    """The per-flow series columns (name, kind) a run of ``config_json`` writes: the real
    engine's own answer (``_engine.series_columns``, the contract the kernel backend also
    writes to), so this stand-in cannot drift from it."""
    return [tuple(c) for c in _real_engine.series_columns(config_json)]


def _sample(name: str, kind: str, share: float, seed: int):
    """The stand-in's value of a series column: the flow's equal share for rates, fixed
    small numbers otherwise, NaN for the algorithm's own ``cc_*`` values."""
    if kind == "str":
        return "open" if name == "ca_state" else ""
    if name.startswith("cc_"):
        return float("nan")
    if name.endswith("_bps"):
        return share
    if name == "rtt_ms":
        return 20.0 + (seed % 3)
    if name.endswith("_ms"):
        return 20.0
    if name.endswith("_pkts"):
        return 10.0
    return 0 if kind == "u64" else 0.0


def run(config_json: str, progress=None, max_packets_held=None) -> dict:
    CALLS["run"] += 1
    cfg = json.loads(config_json)
    validate(config_json)
    dur, dt = cfg["duration_ns"], cfg["sample_interval_ns"]
    rate = cfg["bottleneck"]["rate_bps"]
    flows = cfg["flows"]
    columns = [c for c in series_columns(config_json) if c[0] not in ("time_ns", "flow")]
    series = {k: [] for k in ["time_ns", "flow"] + [name for name, _ in columns]}
    queue = {"time_ns": [], "backlog_pkts": [], "backlog_bytes": [], "drops": []}
    received = [0] * len(flows)
    t = dt
    while t <= dur:
        active = [i for i, f in enumerate(flows) if f["start_ns"] < t <= (f["stop_ns"] or dur)]
        for i, _f in enumerate(flows):
            share = rate / len(active) if i in active else 0.0
            received[i] += int(share * dt / 8e9)
            series["time_ns"].append(t)
            series["flow"].append(i)
            for name, kind in columns:
                series[name].append(_sample(name, kind, share, cfg["seed"]))
        queue["time_ns"].append(t)
        queue["backlog_pkts"].append(5)
        queue["backlog_bytes"].append(7500)
        queue["drops"].append(0)
        if progress is not None:
            progress(t / 1e9)
        t += dt
    out_flows = []
    for i, f in enumerate(flows):
        counters = dict.fromkeys(_required("FlowCounters"), 0)
        counters.update(
            {
                "cc": f["cc"],
                "sent_packets": received[i] // 1448 + 1,
                "sent_bytes": received[i],
                "received_packets": received[i] // 1448,
                "received_bytes": received[i],
                "delivered_bytes": received[i],
                "start_ns": f["start_ns"],
                "stop_ns": f["stop_ns"],
            }
        )
        out_flows.append(counters)
    bottleneck = dict.fromkeys(_required("QueueReport"), 0)
    bottleneck.update({"name": "bottleneck", "enqueued": 1, "departed": 1})
    return {
        "flows": out_flows,
        "queues": [bottleneck],
        "series": series,
        "queue_series": queue,
        "bottleneck_packets": 1,
        "events_processed": 1,
    }
