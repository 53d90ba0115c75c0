"""A hand-made run (no engine): three flows on a 20 Mbit/s bottleneck, for report and
results tests. The numbers are made up but consistent (shares sum to the link rate)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from tcplab.analysis.rundata import RunData
from tcplab.analysis.summary import flow_metrics, summarize
from tcplab.runs.result import Result
from tcplab.specs.load import parse_spec

SPEC = {
    "experiment": {"name": "handmade", "duration": "10s", "sample_interval": "100ms"},
    "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "50pkt"},
    "flows": [
        {"cc": "bbr", "rtt": "20ms", "count": 2},
        {"cc": "cubic", "rtt": "20ms", "start": "2s"},
    ],
}


def handmade_run() -> Result:
    spec = parse_spec(SPEC, check_algorithms=False)
    t = np.round(np.arange(1, 101) * 0.1, 6)
    rows = []
    modes = ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"]
    for fid in range(3):
        for k, ts in enumerate(t):
            active = ts > (2.0 if fid == 2 else 0.0)
            thr = (20e6 / (3 if ts > 2 else 2)) * (1 + 0.1 * np.sin(ts + fid)) if active else 0.0
            rows.append(
                {
                    "time_s": ts,
                    "flow": fid,
                    "cc": "cubic" if fid == 2 else "bbr",
                    "cwnd_pkts": 20 + 5 * np.sin(ts * 3 + fid) if active else np.nan,
                    "inflight_pkts": 18 + 4 * np.sin(ts * 3 + fid) if active else np.nan,
                    "pacing_rate_bps": thr * 1.1,
                    "rtt_ms": 20 + 3 * (1 + np.sin(ts)) if active else np.nan,
                    "throughput_bps": thr,
                    "goodput_bps": thr * 0.98,
                    "sending_rate_bps": thr * 1.01,
                    "retransmits": int(k % 17 == 0),
                    "ca_state": "open",
                    "cc_bw_bps": thr * 1.05 if fid < 2 else np.nan,
                    "cc_min_rtt_ms": 20.0 if fid < 2 else np.nan,
                    "cc_mode": (modes[min(3, k // 10)] if fid < 2 else None),
                }
            )
    series = pd.DataFrame(rows)
    series["cc_mode"] = series["cc_mode"].astype("string")
    queue = pd.DataFrame(
        {
            "time_s": t,
            "backlog_pkts": (10 + 10 * np.sin(t)).round(),
            "backlog_bytes": (10 + 10 * np.sin(t)).round() * 1500,
            "drops": (t * 3).astype(int),
        }
    )
    flows = pd.DataFrame(
        {
            "flow": [0, 1, 2],
            "group": [0, 0, 1],
            "cc": ["bbr", "bbr", "cubic"],
            "start_s": [0.0, 0.0, 2.0],
            "stop_s": [10.0] * 3,
            "rtt_ms": [20.0] * 3,
            "sent_packets": [6000, 6000, 4000],
            "retransmitted_packets": [6, 6, 6],
            "received_bytes": [8_000_000, 8_000_000, 5_000_000],
            "delivered_bytes": [7_900_000, 7_900_000, 4_900_000],
        }
    ).set_index("flow")
    queues = [
        {"name": "bottleneck", "enqueued": 16000, "departed": 15970, "dropped": 30, "backlog": 0}
    ]
    run = RunData(spec, series, queue, flows, queues, {})
    summary = summarize(run)
    return Result(spec, series, queue, flow_metrics(run), summary["aggregate"], summary, run=run)


def write_handmade_sweep(
    out, axes: dict, runs: list[tuple[dict, int, dict, list[dict]]], digest_tag: str = ""
) -> None:
    """A hand-made sweep directory (no engine): ``sweep.json`` over ``axes`` and, for each
    ``(point, seed, aggregate, flows)``, a minimal finished run in ``runs/<digest>/``
    (manifest.json, spec.toml with the point applied, summary.json, a two-sample
    series.parquet per flow). ``digest_tag`` makes the digests of two sweeps differ."""
    import json
    from pathlib import Path

    from tcplab.specs.load import apply_overrides
    from tcplab.specs.tomlout import dumps

    out = Path(out)
    plan_runs = []
    for k, (point, seed, aggregate, flows) in enumerate(runs):
        digest = f"{k:04d}{digest_tag}"
        d = out / "runs" / digest
        d.mkdir(parents=True)
        spec = apply_overrides(SPEC, {**point, "experiment.seed": seed}, "sweep")
        (d / "spec.toml").write_text(dumps(spec))
        (d / "manifest.json").write_text("{}")
        by_cc: dict = {}
        for f in flows:
            by_cc.setdefault(f["cc"], {"share": 0.0})["share"] += f.get("share", 0.0)
        summary = {"aggregate": aggregate, "by_cc": by_cc, "flows": flows}
        (d / "summary.json").write_text(json.dumps(summary))
        pd.DataFrame(
            {
                "time_s": [0.1, 0.2] * len(flows),
                "flow": [f["flow"] for f in flows for _ in (0, 1)],
                "throughput_bps": [1e6, 2e6] * len(flows),
            }
        ).to_parquet(d / "series.parquet")
        plan_runs.append({"point": point, "repeat": 0, "seed": seed, "digest": digest})
    doc = {"axes": axes, "repeat": 1, "metrics": [], "runs": plan_runs}
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps(doc))
