"""A stand-in for ``tcplab._engine`` with the binding's interface, for tests of the
Python plumbing (spec checks, CLI, sweep cache) that must not depend on simulator
behaviour. Its numbers are simple and deterministic: the bottleneck rate is shared
equally among the active flows."""

from __future__ import annotations

import json

CALLS = {"run": 0}

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


def run(config_json: str, progress=None) -> dict:
    CALLS["run"] += 1
    cfg = json.loads(config_json)
    validate(config_json)
    dur, dt = cfg["duration_ns"], cfg["sample_interval_ns"]
    rate = cfg["bottleneck"]["rate_bps"]
    flows = cfg["flows"]
    series = {
        k: []
        for k in [
            "time_ns",
            "flow",
            "cwnd_pkts",
            "inflight_pkts",
            "pacing_rate_bps",
            "srtt_ms",
            "rtt_ms",
            "delivery_rate_bps",
            "throughput_bps",
            "goodput_bps",
            "sending_rate_bps",
            "retransmits",
            "ca_state",
        ]
    }
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
            series["cwnd_pkts"].append(10.0)
            series["inflight_pkts"].append(10.0)
            series["pacing_rate_bps"].append(share)
            series["srtt_ms"].append(20.0)
            series["rtt_ms"].append(20.0 + (cfg["seed"] % 3))
            series["delivery_rate_bps"].append(share)
            series["throughput_bps"].append(share)
            series["goodput_bps"].append(share)
            series["sending_rate_bps"].append(share)
            series["retransmits"].append(0)
            series["ca_state"].append("open")
        queue["time_ns"].append(t)
        queue["backlog_pkts"].append(5)
        queue["backlog_bytes"].append(7500)
        queue["drops"].append(0)
        if progress is not None:
            progress(t / 1e9)
        t += dt
    out_flows = [
        {
            "cc": f["cc"],
            "sent_packets": received[i] // 1448 + 1,
            "sent_bytes": received[i],
            "retransmitted_packets": 0,
            "received_bytes": received[i],
            "delivered_bytes": received[i],
            "duplicate_packets": 0,
            "dropped_packets": 0,
            "in_flight_packets_at_end": 0,
            "start_ns": f["start_ns"],
            "stop_ns": f["stop_ns"],
        }
        for i, f in enumerate(flows)
    ]
    return {
        "flows": out_flows,
        "queues": [
            {
                "name": "bottleneck",
                "enqueued": 1,
                "departed": 1,
                "dropped": 0,
                "random_loss": 0,
                "backlog": 0,
            }
        ],
        "series": series,
        "queue_series": queue,
        "bottleneck_packets": 1,
        "events_processed": 1,
    }
