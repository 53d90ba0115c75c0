"""The run report's writers (report.png and report.html: grouped legends beyond six flows,
the throughput-delay scatter, the queueing-delay axis, the delayed-ACK marks, the probes'
RTT) against hand-made runs drawn at random: 1-40 flows of random algorithm and RTT
mixes, series that are empty, all-NaN, all-zero, a single sample or missing flows,
queues that are empty, probes with and without echoes. Whatever is drawn, drawing
never raises, and a run with probes shows "probe (ping) RTT". No engine needed."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcplab.analysis.rundata import RunData, empty_probe_rtts, probe_rtts
from tcplab.analysis.summary import flow_metrics, summarize
from tcplab.runs.result import Result
from tcplab.specs.load import parse_spec

CCS = ["bbr", "cubic", "reno", "bbr3", "vegas"]
SHAPES = ["normal", "empty", "nan", "zero", "one_sample", "sparse"]


@st.composite
def runs(draw):
    """(spec dict, series shape, queue empty?, probes: list of echo counts)."""
    n_groups = draw(st.integers(1, 5))
    flows = []
    left = draw(st.integers(1, 40))
    for g in range(n_groups):
        count = left if g == n_groups - 1 else draw(st.integers(1, max(1, left - (n_groups - g))))
        if count <= 0:
            break
        left -= count
        flows.append(
            {
                "cc": draw(st.sampled_from(CCS)),
                "rtt": draw(st.sampled_from(["20ms", "40ms", "80ms"])),
                "count": count,
                "start": draw(st.sampled_from(["0s", "1s"])),
            }
        )
        if left <= 0:
            break
    spec = {
        "experiment": {"name": "fuzz", "duration": "4s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": flows,
    }
    probes = draw(st.lists(st.integers(0, 40), max_size=2))
    if probes:
        spec["probes"] = [{"name": f"p{i}", "interval": "100ms"} for i in range(len(probes))]
    return spec, draw(st.sampled_from(SHAPES)), draw(st.booleans()), probes, draw(st.integers())


def _series(n: int, shape: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed % 2**32)
    times = {"one_sample": [0.1], "empty": []}.get(shape, list(np.round(np.arange(1, 41) * 0.1, 6)))
    rows = []
    for fid in range(n):
        if shape == "sparse" and fid % 3 == 1:
            continue  # a flow with no row at all
        for t in times:
            thr = 0.0 if shape == "zero" else float(rng.uniform(0, 20e6 / n))
            rtt = np.nan if shape == "nan" else float(rng.choice([20.0, 41.0, 81.0, 60.0]))
            rows.append(
                {
                    "time_s": t,
                    "flow": fid,
                    "cwnd_pkts": float(rng.choice([1, 2, 10, 40])),
                    "inflight_pkts": float(rng.uniform(0, 40)),
                    "pacing_rate_bps": thr * 1.2,
                    "rtt_ms": rtt,
                    "srtt_ms": rtt,
                    "throughput_bps": thr,
                    "goodput_bps": thr,
                    "sending_rate_bps": thr,
                    "delivery_rate_bps": thr,
                    "retransmits": int(rng.integers(0, 3)),
                    "ca_state": "open",
                }
            )
    cols = ["time_s", "flow", "cwnd_pkts", "inflight_pkts", "pacing_rate_bps", "rtt_ms"]
    cols += ["srtt_ms", "throughput_bps", "goodput_bps", "sending_rate_bps"]
    cols += ["delivery_rate_bps", "retransmits", "ca_state"]
    return pd.DataFrame(rows, columns=cols)


def _result(spec_doc, shape, empty_queue, probes, seed) -> Result:
    spec = parse_spec(spec_doc, check_algorithms=False)
    n = sum(f["count"] for f in spec_doc["flows"])
    ccs = [f["cc"] for f in spec_doc["flows"] for _ in range(f["count"])]
    rtts = [
        float(f["rtt"].removesuffix("ms")) for f in spec_doc["flows"] for _ in range(f["count"])
    ]
    series = _series(n, shape, seed)
    series["cc"] = pd.Series([ccs[f] for f in series["flow"]], dtype="string")
    t = [] if empty_queue else list(np.round(np.arange(1, 41) * 0.1, 6))
    queue = pd.DataFrame(
        {
            "time_s": t,
            "backlog_pkts": [float(k % 30) for k in range(len(t))],
            "backlog_bytes": [float(k % 30) * 1500 for k in range(len(t))],
            "drops": [k % 2 for k in range(len(t))],
        }
    )
    flows = pd.DataFrame(
        {
            "flow": range(n),
            "group": [0] * n,
            "cc": ccs,
            "start_s": [0.0] * n,
            "stop_s": [4.0] * n,
            "rtt_ms": rtts,
            "sent_packets": [100 * (shape != "zero")] * n,
            "retransmitted_packets": [1] * n,
            "received_bytes": [0 if shape == "zero" else 150_000] * n,
            "delivered_bytes": [0 if shape == "zero" else 150_000] * n,
        }
    ).set_index("flow")
    run = RunData(spec, series, queue, flows, [], {})
    raw = [
        {
            "interval_ns": 100_000_000,
            "packet_bytes": 84,
            "start_ns": 0,
            "stop_ns": 4_000_000_000,
            "sent_packets": 40,
            "reached_packets": k,
            "echoed_packets": k,
            "dropped_packets": 40 - k,
            "in_flight_packets_at_end": 0,
            "seq": list(range(k)),
            "sent_ns": [j * 100_000_000 for j in range(k)],
            "rtt_ns": [20_000_000 + 1_000 * j for j in range(k)],
        }
        for k in probes
    ]
    run.probes = raw
    run.probe_rtts = (
        probe_rtts(raw, [f"p{i}" for i in range(len(raw))]) if raw else empty_probe_rtts()
    )
    summary = summarize(run)
    return Result(spec, series, queue, flow_metrics(run), summary["aggregate"], summary, run=run)


@settings(
    max_examples=int(os.environ.get("TCPLAB_FUZZ_REPORT", "25")),
    derandomize=os.environ.get("TCPLAB_FUZZ") != "long",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(drawn=runs())
def test_drawing_any_run_never_raises(drawn):
    import matplotlib.pyplot as plt
    from tcplab.report.html import run_html
    from tcplab.report.run_report import draw_report

    spec_doc, shape, empty_queue, probes, seed = drawn
    result = _result(spec_doc, shape, empty_queue, probes, seed)
    fig = draw_report(result)
    try:
        labels = [
            t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
        ]
    finally:
        plt.close(fig)
    html = run_html(result)
    assert "<html" in html
    if any(probes):
        assert any(lab.startswith("probe (ping) RTT") for lab in labels), labels
        assert "probe (ping) RTT" in html
    if probes:  # the statistics are listed even when no probe came back
        assert "<th>probe (ping) RTT</th>" in html


@pytest.mark.parametrize("n", [1, 7, 40])
def test_the_fuzzed_extremes_by_hand(n):
    """The corners the strategy may miss, drawn once each: n flows of one group with
    empty, all-NaN and all-zero series, probes that all came back and none that did."""
    import matplotlib.pyplot as plt
    from tcplab.report.html import run_html
    from tcplab.report.run_report import draw_report

    spec = {
        "experiment": {"name": "edge", "duration": "4s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms", "count": n}],
        "probes": [{"name": "a"}, {"name": "b"}],
    }
    for shape in ("empty", "nan", "zero"):
        result = _result(spec, shape, shape == "empty", [40, 0], 1)
        plt.close(draw_report(result))
        assert "probe (ping) RTT" in run_html(result)
