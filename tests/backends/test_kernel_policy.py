"""A trained policy (``cc = "policy:FILE"``) on the kernel backend: the BPF program
policy_rate.bpf.c measures the socket and applies what the user-space agent
(backends/kernel/policy_agent.py) writes, and the policy then follows on real Linux TCP
the trajectory it follows in the simulator.

The policy is experiments/gym/cem-linear.json, trained by examples/gym_cem.py
(``--iterations 12 --population 12``, seed 0). On one flow at 10 Mbit/s, 60 ms, 1 BDP,
20 s it climbs from the initial window over the handshake's RTT (1.93 Mbit/s) and then
oscillates between ~4.5-5.3 and ~10.6 Mbit/s (10th, 90th percentiles), 6 cycles after the first second on both;
measured (issue 38's start, load average 4.7 on 2 cores): goodput 8.13 (sim) vs 7.98
Mbit/s (kernel), mean RTT 79.2 vs 79.2 ms, retransmission rate 0.34 vs 0.30 %, pacing
rate median 8.77 vs 8.80 Mbit/s (before issue 38, starting at the bottleneck rate:
goodput 9.15 vs 9.07, RTT 85.2 vs 84.0 ms); the phase of the oscillation differs
(the kernel applies the agent's writes at the next ACK and its agent wakes up late by
the machine's scheduling), so rates are compared as distributions over time, not
instant by instant. Needs root, the kernel backend, the loader, BTF and clang; skipped
elsewhere with the reason. About 40 s of real time."""

from __future__ import annotations

import fcntl
import json
import socket
import struct
import termios
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from kernel_skips import MEASUREMENT, NEEDS_BPF_ON_KERNEL
from tcplab import api
from tcplab.backends.kernel import bpf_ops, policy_agent, tcpinfo

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "experiments" / "gym" / "cem-linear.json"
pytestmark = NEEDS_BPF_ON_KERNEL


def _unacked_bytes(sock: socket.socket) -> int:
    """Bytes in the socket's send queue, sent or not, not yet acked (SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]


def test_the_program_applies_the_agents_writes_and_measures_the_socket():
    """Registered alone, over loopback: a connection running the program takes the
    written pacing rate and cwnd at its start and at a later ACK, and its measurement
    entry carries the socket's own counters (TCP_INFO's). Registered a second time by
    the same process, under the same name (as each run of a sweep or of
    scripts/fidelity.py is): the agent finds the new copy's maps, not the last run's
    (which once took every write of the runs after the first, their cwnd staying 10)."""
    from tcplab.backends.kernel.policy_maps import find

    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()
    port = ls.getsockname()[1]
    earlier = bpf_ops.register([policy_agent.program(policy_agent.PROGRAM_KEYS["aurora"])])
    # A socket of the earlier copy outlives its registration (as a run's sockets do
    # while its namespaces go): that copy lingers in the kernel under the same name.
    old = socket.socket()
    old.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, earlier.names[0].encode())
    old.connect(("127.0.0.1", port))
    old_peer, _ = ls.accept()
    bpf_ops.unregister(earlier)
    reg = bpf_ops.register([policy_agent.program(policy_agent.PROGRAM_KEYS["aurora"])])
    assert reg.names == earlier.names
    try:
        maps = find(reg.names[0])

        def drain():
            c, _ = ls.accept()
            while c.recv(1 << 16):
                pass
            c.close()

        threading.Thread(target=drain, daemon=True).start()
        maps.write(port, 80e6, 30, 1)  # before the connection: applied by init
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, tcpinfo.TCP_CONGESTION, reg.names[0].encode())
        s.connect(("127.0.0.1", port))
        first = tcpinfo.sample(s, False)
        assert (first["pacing_rate_bps"], first["cwnd_pkts"]) == (80e6, 30)
        maps.write(port, 40e6, 50, 2)  # applied at the next ACK
        chunk = bytes(1 << 16)
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            s.send(chunk)
        # Wait until everything is acked (SIOCOUTQ: bytes sent or queued, not yet
        # acked), then the entry holds the last ACK's counters. A fixed 0.2 s sleep was
        # not enough: the send buffer autotunes to ~4 MB, 0.8 s at 40 Mbit/s, and a CI
        # run read the entry two segments (130966 bytes) ahead of TCP_INFO.
        deadline = time.monotonic() + 20
        while _unacked_bytes(s) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _unacked_bytes(s) == 0, "the connection did not drain in 20 s"
        time.sleep(0.05)
        info = tcpinfo.sample(s, False)
        m = maps.read(port)
        assert (info["pacing_rate_bps"], info["cwnd_pkts"]) == (40e6, 50)
        assert m["applied"] == 2 and m["pacing_rate"] * 8 == 40e6 and m["cwnd"] == 50
        assert m["bytes_sent"] == info["bytes_sent"]
        assert m["rtt_count"] > 0 and 0 < m["rtt_min_us"] <= m["rtt_sum_us"] / m["rtt_count"]
        s.close()
        maps.close()
    finally:
        for sock in (old, old_peer, ls):
            sock.close()
        bpf_ops.unregister(reg)


def _spec(backend: str) -> dict:
    return {
        "experiment": {"duration": "20s", "sample_interval": "100ms", "backend": backend},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": f"policy:{POLICY}", "rtt": "60ms"}],
    }


def _upward_crossings(x: np.ndarray) -> int:
    """How often ``x`` rises through its median: cycles of an oscillation."""
    above = x > np.median(x)
    return int(np.count_nonzero(above[1:] & ~above[:-1]))


@MEASUREMENT
@pytest.mark.xfail(
    strict=False,
    reason=(
        "one kernel run against the simulator's 8.13 Mbit/s: measured 2026-12-02 at load "
        "< 1, 12 runs gave 0.94-0.99 of it (the 5 % bound fails on some) and three 0.26, "
        "0.64 and 0.89, where the policy's writes seem not applied for part of the run; "
        "since the receivers run Reno, not the policy program (run.py receiver_cc), 15 runs "
        "at load ~10 gave 0.953-0.987 with at most 3 writes pending at a step "
        "(engine.kernel.policy_agents.writes_pending); docs/FIDELITY-policy.md judges the "
        "policy over seeds"
    ),
)
def test_a_trained_policy_follows_its_simulated_trajectory_on_the_kernel():
    kernel = api.run(_spec("kernel"), report=False)
    sim = api.run(_spec("sim"), report=False)
    k, s = kernel.summary.iloc[0], sim.summary.iloc[0]
    assert k["cc"] == s["cc"] == "policy:cem-linear"
    # Goodput within 5 % and mean RTT within 15 %. With issue 38's start (0.8.0) the
    # simulator gives 8.13 Mbit/s and 79.2 ms; six kernel runs here (2026-12-02, load
    # < 1) gave 7.93-8.02 Mbit/s (0.975-0.986) and 70.7-79.0 ms (0.89-1.00; mean 74.3,
    # -6 %, with the receivers running the program or not): one run's RTT scatters
    # beyond the suite's 5 % goal, which docs/FIDELITY-policy.md judges over seeds.
    assert 0.95 <= k["goodput_bps"] / s["goodput_bps"] <= 1.05, (k, s)
    assert 0.85 <= k["mean_rtt_ms"] / s["mean_rtt_ms"] <= 1.15, (k, s)
    # The rate over time after the first second, as a distribution: the mean within 5 %,
    # the oscillation's spread (10th to 90th percentile) within 35 %, and as many
    # cycles within 2 (6-7 in 19 s on both; 6 on both with issue 38's start).
    rk, rs = (
        r.series[(r.series["flow"] == 0) & (r.series["time_s"] >= 1.0)]["pacing_rate_bps"].to_numpy(
            dtype=float
        )
        for r in (kernel, sim)
    )
    why = f"kernel {np.percentile(rk, [10, 50, 90])} vs sim {np.percentile(rs, [10, 50, 90])}"
    assert 0.95 <= rk.mean() / rs.mean() <= 1.05, why
    spread_k = np.subtract(*np.percentile(rk, [90, 10]))
    spread_s = np.subtract(*np.percentile(rs, [90, 10]))
    assert 0.65 <= spread_k / spread_s <= 1.35, why
    assert abs(_upward_crossings(rk) - _upward_crossings(rs)) <= 2, why
    # The agent stepped about every half srtt (~40 ms: ~500 steps in 20 s), on time
    # within the machine's scheduling (lateness recorded in the summary).
    (agent,) = kernel.summary_json["engine"]["kernel"]["policy_agents"]
    assert 300 <= agent["steps"] <= 700, agent


def _onnx_of(json_policy: Path, out: Path, name: str) -> Path:
    """The JSON policy's network as an ONNX model (one Gemm per layer, as torch's
    nn.Linear exports it, its activation as a node; weights rounded to float32), its
    history and transform in the model's metadata (tcplab.onnx_policy)."""
    onnx = pytest.importorskip("onnx", reason="needs the onnx package: pip install 'tcplab[onnx]'")
    from onnx import TensorProto, helper, numpy_helper

    p = json.loads(json_policy.read_text())
    nodes, inits, x = [], [], "obs"
    for i, layer in enumerate(p["layers"]):
        for part, v in (("w", layer["weights"]), ("b", layer["bias"])):
            inits.append(numpy_helper.from_array(np.asarray(v, dtype=np.float32), f"{part}{i}"))
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [f"h{i}"], transB=1))
        x = f"h{i}"
        act = {"tanh": "Tanh", "relu": "Relu", "sigmoid": "Sigmoid"}.get(layer["activation"])
        if act:
            nodes.append(helper.make_node(act, [x], [f"a{i}"]))
            x = f"a{i}"
    nodes.append(helper.make_node("Identity", [x], ["action"]))
    width = len(p["layers"][0]["weights"][0])
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, 1])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(
        m,
        {
            "tcplab.name": name,
            "tcplab.history": str(p["history"]),
            "tcplab.transform": p["transform"],
            "tcplab.rtt_fraction": str(p["rtt_fraction"]),
        },
    )
    onnx.save(m, str(out))
    return out


def test_an_onnx_policy_runs_on_the_kernel(tmp_path):
    """experiments/gym/cem-linear.json exported as ONNX (float32 weights), 5 s on each
    backend: the kernel's agent steps the translated policy about every half srtt and
    the flow is reported under the model's name on both. Measured (2026-12-02, load ~4 on
    2 cores, three kernel runs, 0.10.0's emulator): goodput 4.41-4.43 Mbit/s against the
    simulator's 5.10 (0.865-0.870; the 20 s run above gives 0.94-0.99: the kernel's first
    seconds climb slower), mean RTT 61.4 vs 62.1 ms, 150-151 steps. With 0.11.0's
    emulator, which no longer lets a packet cross the path before it was sent
    (docs/FIDELITY-gaps.md gap 12), seven runs gave 0.706-0.876 (3.60-4.47 Mbit/s; load
    0.6-3, the two lowest beside a full test run), mean RTT 61.4-61.8 ms. A run whose
    writes are not applied gave 0.26 (the test above's reason): 0.6 tells them apart."""
    model = _onnx_of(POLICY, tmp_path / "cem.onnx", "cem-linear-onnx")
    spec = {
        "experiment": {"duration": "5s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": f"policy:{model}", "rtt": "60ms"}],
    }
    kernel = api.run(
        {**spec, "experiment": {**spec["experiment"], "backend": "kernel"}}, report=False
    )
    sim = api.run(spec, report=False)
    k, s = kernel.summary.iloc[0], sim.summary.iloc[0]
    assert k["cc"] == s["cc"] == "policy:cem-linear-onnx"
    (agent,) = kernel.summary_json["engine"]["kernel"]["policy_agents"]
    # About every half srtt (~31 ms at the 62 ms mean RTT: ~160 steps in 5 s), with
    # the test above's allowance for a late agent (15-35 steps a second).
    assert 75 <= agent["steps"] <= 200, agent
    assert 0.6 <= k["goodput_bps"] / s["goodput_bps"] <= 1.1, (k, s)
