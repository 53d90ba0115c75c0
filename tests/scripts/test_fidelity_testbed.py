"""scripts/fidelity_testbed.py, the veth testbed's column of the fidelity suite: which
scenarios it can express, the command it builds, and the row it prints beside the kernel
backend's (hand-made numbers; no root, no runs)."""

from __future__ import annotations

from pathlib import Path

from script_module import script_module

ROOT = Path(__file__).resolve().parents[2]
STARTUP = "start-up retransmissions (first 2 s of each flow, all flows)"


def _mod():
    return script_module("fidelity_testbed")


def _resolved(name: str):
    from tcplab.lowering.resolve import resolve
    from tcplab.specs.load import load_spec

    return resolve(load_spec(ROOT / "experiments" / "fidelity" / name))


def test_staggered_bbr_flows_become_testbed_arguments():
    # f07: four BBR flows, 20 Mbit/s, 40 ms, 0.3 BDP of 40 ms = 0.3 x 66.7 = 20 packets,
    # staggered by 2 s.
    args, why = _mod().expressible(_resolved("f07-four-bbr-shallow.toml"))
    assert why == ""
    assert args == {
        "cc": ["bbr"] * 4,
        "rate_mbit": 20.0,
        "rtt_ms": [40.0] * 4,
        "buffer_pkts": 20,
        "duration_s": 20.0,
        "start_s": [0.0, 2.0, 4.0, 6.0],
    }
    cmd = _mod().command(args, 3)
    assert cmd[cmd.index("--start") + 1] == "0,2,4,6"
    assert cmd[cmd.index("--buffer-pkts") + 1] == "20"
    assert cmd[cmd.index("--runs") + 1] == "3"


def test_what_the_testbed_cannot_express_is_named():
    m = _mod()
    assert m.expressible(_resolved("f08-bandwidth-halving-bbr.toml")) == (
        None,
        "not on the testbed: events",
    )
    assert m.expressible(_resolved("f17-bbr-jitter-mixed-rtt.toml")) == (
        None,
        "not on the testbed: flows[1].receiver_access.jitter",
    )
    assert m.expressible(_resolved("f10-bbr-vs-cubic-random-loss.toml"))[1].endswith(
        "bottleneck.loss"
    )


def test_row_sets_the_testbed_beside_the_kernel_backend():
    # Kernel backend, two runs: shares (0.5, 0.3, 0.2) and (0.6, 0.2, 0.2): means 0.55,
    # 0.25, 0.20, sd 0.071, 0.071, 0.000; retransmissions 100 and 140 (mean 120), start-up
    # 10 and 50. Testbed, two runs: shares (0.4, 0.3, 0.3) and (0.4, 0.4, 0.2): means
    # 0.40, 0.35, 0.25 (sd 0, 0.071, 0.071); retransmissions 20+30+10 = 60 and 40+30+10
    # = 80 (mean 70, 70/120 = 0.58x); start-up 3+4+0 = 7 and 5 (an unmeasured flow, None,
    # counts nothing). Differences -0.15, +0.10, +0.05: the largest is flow 0's, -0.150.
    kernel = [
        {
            "flow 0 (bbr, 40 ms) share": 0.5,
            "flow 1 (cubic, 40 ms) share": 0.3,
            "flow 2 (reno, 40 ms) share": 0.2,
            "retransmissions (all flows)": 100.0,
            STARTUP: 10.0,
        },
        {
            "flow 0 (bbr, 40 ms) share": 0.6,
            "flow 1 (cubic, 40 ms) share": 0.2,
            "flow 2 (reno, 40 ms) share": 0.2,
            "retransmissions (all flows)": 140.0,
            STARTUP: 50.0,
        },
    ]
    testbed = [
        {
            "share": [0.4, 0.3, 0.3],
            "retransmissions": [20, 30, 10],
            "startup_retransmissions": [3, 4, 0],
        },
        {
            "share": [0.4, 0.4, 0.2],
            "retransmissions": [40, 30, 10],
            "startup_retransmissions": [None, 5, 0],
        },
    ]
    assert _mod().row("f14", kernel, testbed, STARTUP) == (
        "| f14 | 2 / 2 | 0.550 ± 0.071; 0.250 ± 0.071; 0.200 ± 0.000 | "
        "0.400 ± 0.000; 0.350 ± 0.071; 0.250 ± 0.071 | flow 0 -0.150 | 120.0 / 70.0 (0.58x) | "
        "10 50 / 7 5 |"
    )


def test_of_two_flows_equal_differences_the_first_flow_s_is_shown():
    # Two flows: kernel 0.9 / 0.1, testbed 0.8 / 0.2: differences -0.1 and +0.1 (equal
    # sizes up to rounding): flow 0's is shown, with its sign.
    kernel = [{"flow 0 (bbr, 40 ms) share": 0.9, "flow 1 (cubic, 40 ms) share": 0.1}]
    testbed = [{"share": [0.8, 0.2], "retransmissions": [1, 1], "startup_retransmissions": [0, 0]}]
    assert "| flow 0 -0.100 |" in _mod().row("f03", kernel, testbed, STARTUP)
