"""The kernel backend runs the simulator's network features: queue disciplines
on the bottleneck, ECN end to end (the emulator's CE marks reach the real senders as
ECE), DCTCP as the shipped BPF program, policers and trace-driven rates. Each runs with
``--backend sim,kernel``; the expectations are hand-computed from the spec and hold on
both backends. They need root, network namespaces, tun and ip (CI runs as root); elsewhere
they are skipped with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tcplab.backends.kernel import requirements
from tcplab.cli import app as cli

_missing = requirements.missing()
needs_kernel = pytest.mark.skipif(
    bool(_missing),
    reason="kernel backend unavailable here: " + "; ".join(r.detail for r in _missing),
)
pytestmark = needs_kernel

DATA = Path(__file__).resolve().parents[2] / "python" / "tcplab" / "data"

HEAD = """
[experiment]
name = "kernel spec"
duration = "{duration}"
sample_interval = "100ms"
"""


def _both(tmp_path: Path, text: str) -> dict[str, Path]:
    spec = tmp_path / "k.toml"
    spec.write_text(text)
    out = tmp_path / "both"
    assert cli.main(["run", str(spec), "-o", str(out), "--backend", "sim,kernel", "-q"]) == 0
    return {b: out / b for b in ("sim", "kernel")}


def _summary(d: Path) -> dict:
    return json.loads((d / "summary.json").read_text())


def _bottleneck(d: Path) -> dict:
    return next(q for q in _summary(d)["queues"] if q["name"] == "bottleneck")


def test_fq_codel_keeps_cubic_s_queue_near_its_target(tmp_path):
    # Two CUBIC flows, 20 Mbit/s, 40 ms, a 4-BDP hard limit (267 packets, 160 ms). Drop-
    # tail would fill it; FQ-CoDel (target 5 ms, interval 100 ms) drops until each flow's
    # sojourn falls under 5 ms: after start-up (2 s) the mean sojourn per interval stays
    # under 4 x 5 ms, and it dropped packets (a drop-tail queue of 267 would not have).
    text = (
        HEAD.format(duration="8s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "4bdp"
aqm = { kind = "fq_codel" }

[[flows]]
cc = "cubic"
rtt = "40ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        q = pd.read_parquet(d / "queue.parquet")
        late = q[q["time_s"] > 2.0]
        assert late["sojourn_ms"].mean() < 20.0, backend
        assert late["backlog_pkts"].max() < 267, backend
        bn = _bottleneck(d)
        assert bn["dropped"] > 0, backend
        assert bn["enqueued"] == bn["departed"] + bn["dropped"] + bn["backlog_pkts"], backend


def test_codel_ce_marks_reach_the_kernel_senders_as_ece(tmp_path):
    # CoDel with ECN and ECN-capable CUBIC (net.ipv4.tcp_ecn = 1 in the senders'
    # namespace): CoDel marks instead of dropping, the receivers see CE, the senders get
    # ECE and reduce (CWR). Retransmissions and handshakes are Not-ECT (tcp_ecn_send), so
    # CoDel may drop a few of those, far fewer than it marks.
    text = (
        HEAD.format(duration="8s")
        + """
[tcp]
ecn = true

[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "4bdp"
aqm = { kind = "codel", ecn = true }

[[flows]]
cc = "cubic"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        bn = _bottleneck(d)
        f = _summary(d)["flows"][0]
        assert bn["marked"] > 0, backend
        assert f["ce_packets"] > 0 and f["ece_acks"] > 0 and f["ecn_reductions"] > 0, (backend, f)
        assert bn["dropped"] < bn["marked"], (backend, bn)


def test_ecn_per_flow_one_flow_marked_the_other_dropped(tmp_path):
    # Two CUBIC flows through CoDel with ECN, only the first asking for ECN: on the kernel
    # its connection is routed over the route with ``features ecn`` (the senders'
    # tcp_ecn is 0), so only its SYN requests ECN. CoDel marks the first flow's ECT
    # packets (CE at the receiver, echoed as ECE, answered by CWR: all three counted on
    # the wire, and a receiver echoes ECE and a sender sets CWR only on a connection that
    # negotiated ECN) and drops the second's Not-ECT ones: the second sees no CE, no ECE,
    # no CWR, and loses packets. The first may lose a few Not-ECT retransmissions.
    text = (
        HEAD.format(duration="6s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "4bdp"
aqm = { kind = "codel", ecn = true }

[[flows]]
cc = "cubic"
rtt = "40ms"
ecn = true

[[flows]]
cc = "cubic"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        ecn, plain = _summary(d)["flows"]
        assert ecn["ce_packets"] > 0 and ecn["ece_acks"] > 0, (backend, ecn)
        assert ecn["ecn_reductions"] > 0, (backend, ecn)
        assert ecn["dropped_packets"] < ecn["ce_packets"], (backend, ecn)
        assert plain["ce_packets"] == plain["ece_acks"] == plain["ecn_reductions"] == 0, (
            backend,
            plain,
        )
        assert plain["dropped_packets"] > 0, (backend, plain)


def test_bpf_dctcp_holds_the_queue_near_the_marking_threshold(tmp_path):
    # DCTCP (the shipped BPF program; this kernel has no tcp_dctcp module) against a step
    # marker at K = 20 packets: it negotiates ECN itself (TCP_CONG_NEEDS_ECN), reacts to
    # the fraction of marks, and keeps the queue around K (RFC 8257 Sec. 3) far below the
    # 4-BDP hard limit (267 packets), without losses after start-up.
    dctcp = DATA / "bpf" / "examples" / "dctcp.bpf.c"
    text = (
        HEAD.format(duration="8s")
        + f"""
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "4bdp"
aqm = {{ kind = "step", k = 20, ecn = true }}

[[flows]]
cc = "bpf:{dctcp}"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        q = pd.read_parquet(d / "queue.parquet")
        late = q[q["time_s"] > 2.0]
        assert 5 <= late["backlog_pkts"].mean() <= 40, backend
        f = _summary(d)["flows"][0]
        assert f["ece_acks"] > 0 and f["ecn_reductions"] > 0, (backend, f)
        assert _bottleneck(d)["dropped"] == 0, backend


def test_a_policer_caps_bbr_at_its_rate(tmp_path):
    # A 10 Mbit/s policer with a 30 KB bucket on a 50 Mbit/s bottleneck: over the 8 s no
    # more than 10 Mbit/s x 8 s + 30 KB (10.03 MB) of wire bytes pass, so the flow's
    # payload bytes stay below that; BBR still gets at least half the policed rate.
    text = (
        HEAD.format(duration="8s")
        + """
[bottleneck]
rate = "50Mbps"
delay = "10ms"
buffer = "1bdp"
policer = { rate = "10Mbps", burst = "30000B" }

[[flows]]
cc = "bbr"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        f = _summary(d)["flows"][0]
        assert 0.5 * 10e6 / 8 * 8 <= f["received_bytes"] <= 10e6 / 8 * 8 + 30_000, backend
        assert _bottleneck(d)["dropped"] > 0, backend


def test_a_trace_driven_bottleneck_serves_at_the_trace_s_rate(tmp_path):
    # square-24-6mbps-5s: two 1500-byte opportunities per ms (24 Mbit/s) for 5 s, then one
    # every 2 ms (6 Mbit/s). A CUBIC flow's throughput per 100 ms interval is at most the
    # trace's (one packet of slack, 0.12 Mbit/s), in each phase.
    trace = DATA / "traces" / "square-24-6mbps-5s"
    text = (
        HEAD.format(duration="8s")
        + f"""
[bottleneck]
rate = {{ trace = "{trace}" }}
delay = "10ms"
buffer = "100000B"

[[flows]]
cc = "cubic"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        s = pd.read_parquet(d / "series.parquet")
        thr = s.groupby("time_s")["throughput_bps"].sum()
        hi, lo = thr[(thr.index > 0.1) & (thr.index <= 5.0)], thr[thr.index > 5.1]
        assert hi.max() <= 24e6 + 0.12e6 and lo.max() <= 6e6 + 0.12e6, backend
        # It used the high phase (more than the low phase can carry).
        assert hi[hi.index > 2.0].mean() > 12e6, backend


def test_a_parking_lot_s_flows_share_each_of_its_two_bottlenecks(tmp_path):
    # Flow 0 crosses the bottleneck and l2 (both 20 Mbit/s), flow 1 the bottleneck only,
    # flow 2 l2 only: over the run, flows 0 + 1 and flows 0 + 2 each carry at most
    # 20 Mbit/s of payload (what reached a receiver crossed the link during the run; per
    # interval it can exceed the link's rate, flow 0's bytes being held in l2's queue for a
    # while), and every flow gets through.
    text = (
        HEAD.format(duration="8s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "5ms"
buffer = "1bdp"

[[links]]
name = "l2"
rate = "20Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"
path = ["bottleneck", "l2"]

[[flows]]
cc = "cubic"
rtt = "40ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
path = ["l2"]
"""
    )
    for backend, d in _both(tmp_path, text).items():
        s = pd.read_parquet(d / "series.parquet")
        thr = s.pivot(index="time_s", columns="flow", values="throughput_bps")
        assert (thr[0] + thr[1]).mean() <= 20e6, backend
        assert (thr[0] + thr[2]).mean() <= 20e6, backend
        assert (thr.mean() > 1e6).all(), backend
        l2 = next(q for q in _summary(d)["queues"] if q["name"] == "l2")
        assert l2["departed"] > 0, backend


def test_a_constant_rate_source_takes_its_rate_from_cubic(tmp_path):
    # A 6 Mbit/s source (1500-byte packets, one per 2 ms) beside CUBIC on 20 Mbit/s, 1 BDP:
    # 8 s x 500 packets/s = 4000 packets sent; CUBIC's payload is at most the 14 Mbit/s
    # left, averaged over the run; what the source lost is counted.
    text = (
        HEAD.format(duration="8s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"

[[sources]]
rate = "6Mbps"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        src = _summary(d)["sources"][0]
        assert src["sent_packets"] == 4000, backend
        assert src["sent_packets"] == (
            src["received_packets"] + src["dropped_packets"] + src["in_flight_packets_at_end"]
        ), backend
        s = pd.read_parquet(d / "series.parquet")
        assert s["throughput_bps"].mean() <= 14e6, backend


def test_an_on_off_flow_stops_sending_in_its_off_periods(tmp_path):
    # CUBIC on 1 s / off 1 s from 0 (periods from the simulator's code: on 0-1, off 1-2,
    # on 2-3, ...) beside a bulk CUBIC flow, 20 Mbit/s, 40 ms. Late in each off period (from
    # 0.5 s in: what was written before the off time, at most 128 KB + 64 KB on the kernel
    # = 77 ms at 20 Mbit/s, has drained) the on/off flow receives nothing.
    text = (
        HEAD.format(duration="8s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"
onoff = { on = "1s", off = "1s" }

[[flows]]
cc = "cubic"
rtt = "40ms"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        s = pd.read_parquet(d / "series.parquet")
        f0 = s[s["flow"] == 0].set_index("time_s")["throughput_bps"]
        phase = f0.index.to_series().round(3) % 2.0
        assert f0[(phase > 1.5) & (phase <= 1.95)].max() == 0, backend
        assert f0[(phase > 0.3) & (phase <= 0.95)].mean() > 2e6, backend


def test_a_finite_flow_s_completion_time_comes_from_the_real_socket(tmp_path):
    # 1 MB alone on 20 Mbit/s, 40 ms: at least one handshake RTT plus the transfer at the
    # link rate (1 MB x 1500 / 1448 wire bytes / 20 Mbit/s = 0.41 s) and one more 40 ms
    # for the last byte to arrive: >= 0.49 s; slow start from 10 segments takes about 6
    # RTTs before it fills the link, so well under 2 s.
    text = (
        HEAD.format(duration="4s")
        + """
[bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "1bdp"

[[flows]]
cc = "cubic"
rtt = "40ms"
size = "1000000B"
"""
    )
    for backend, d in _both(tmp_path, text).items():
        f = _summary(d)["flows"][0]
        assert 0.49 <= f["fct_s"] <= 2.0, (backend, f.get("fct_s"))
