"""An Orca policy (``"preset": "orca"``) on the kernel backend: its flow runs
tcplab/data/bpf/policy/policy_cubic.bpf.c, the kernel's own CUBIC through the kfuncs
tcp_cubic.c exports, whose window the agent (backends/kernel/policy_agent.py,
OrcaDriver) overrides at Orca's 20 ms reports.

One flow, 20 Mbit/s, 40 ms, 1 BDP, 6 s, ``[tcp] hz = 250`` (this kernel's CONFIG_HZ),
measured here (2026-12-03, load ~2 on 2 cores): the do-nothing Orca policy (action 0
writes the window CUBIC has) gave 18.847 Mbit/s and a mean cwnd of 110.83 on the kernel,
kernel CUBIC 18.845 and 110.83, the simulator's CUBIC 18.853 and 110.67; a quartering
policy (tanh(-3): int(100 x 4^-0.995) = 25 percent of the window every report) 4.63
Mbit/s on the kernel and 5.22 in the simulator. When the agent wrote the window it had
read, the do-nothing policy's mean cwnd reached 119.6 in CI (stop 54) and 106-116 with
the agent held 15-30 ms between read and write: the socket applied the write at a later
ACK, over a window that had moved. The write is now a factor applied to the window at
that ACK (110.78-110.87 with the same holds; docs/FIDELITY-policy.md). Needs root, the
kernel backend, the loader, BTF and clang; skipped elsewhere with the reason. About
20 s of real time."""

from __future__ import annotations

import json

import pytest
from kernel_skips import NEEDS_BPF_ON_KERNEL
from tcplab import api

pytestmark = NEEDS_BPF_ON_KERNEL


def orca(tmp_path, name: str, bias: float) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "format": "tcplab-policy/1",
                "name": name,
                "preset": "orca",
                "history": 10,
                "interval_ns": 20_000_000,
                "transform": "none",
                "layers": [{"weights": [[0.0] * 70], "bias": [bias], "activation": "tanh"}],
            }
        )
    )
    return f"policy:{path}"


def spec(cc: str, backend: str) -> dict:
    return {
        "experiment": {"duration": "6s", "seed": 1, "backend": backend},
        "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"},
        "tcp": {"hz": 250},
        "flows": [{"cc": cc, "rtt": "40ms"}],
    }


def _first_loss_s(run) -> float:
    lost = run.series[run.series["retransmits"] > 0]
    return float(lost["time_s"].min()) if len(lost) else float("inf")


def test_a_do_nothing_orca_policy_on_the_kernel_is_cubic(tmp_path):
    """Action 0 on the kernel's CUBIC: the run the simulator's CUBIC gives (which the
    suite holds to kernel CUBIC), goodput within 2 % and mean cwnd within 2 %; the agent
    reported about every 20 ms after CUBIC's first exit from slow start (~0.3 s).

    The kernel's start-up is bimodal here, with or without the policy: HyStart leaves
    slow start at 76-80 segments as the simulator's does at 74 (first loss at ~1 s; mean
    cwnd 110.7-110.9), or misses and slow start ends by loss at 121-169 (first loss at
    0.3-0.6 s; mean 112.2-115.6; kernel CUBIC alone did so in 2 of 6 runs, 2026-12-03).
    The window is compared on a run that started as the simulator's (up to four tries;
    skipped if none did in four), where the absolute write's race moved it 4-8 % (module doc)."""
    s = api.run(spec("cubic", "sim"), report=False)
    fs = s.summary.iloc[0]
    assert _first_loss_s(s) > 0.8, s.series.head(12)
    for _ in range(4):
        k = api.run(spec(orca(tmp_path, "zero", 0.0), "kernel"), report=False)
        if _first_loss_s(k) > 0.8:
            break
    else:
        pytest.skip("the kernel's slow start ended by loss in 4 runs (its bimodal start-up)")
    fk = k.summary.iloc[0]
    assert fk["cc"] == "policy:zero"
    assert 0.98 <= fk["goodput_bps"] / fs["goodput_bps"] <= 1.02, (fk, fs)
    assert 0.98 <= fk["mean_cwnd_pkts"] / fs["mean_cwnd_pkts"] <= 1.02, (fk, fs)
    (agent,) = k.summary_json["engine"]["kernel"]["policy_agents"]
    assert 250 <= agent["steps"] <= 300, agent  # (6 s - ~0.3 s) / 20 ms = ~285


def test_a_quartering_orca_policy_holds_the_kernels_cubic_down(tmp_path):
    """Every report writes a quarter of the window (at least 4): the kernel's CUBIC,
    which delivers ~18.8 Mbit/s alone, delivers less than half of that (4.6 measured)."""
    k = api.run(spec(orca(tmp_path, "quarter", -3.0), "kernel"), report=False)
    fk = k.summary.iloc[0]
    assert fk["cc"] == "policy:quarter"
    assert fk["goodput_bps"] < 0.5 * 18.8e6, fk
