"""The shipped BPF examples on the kernel follow the trajectory the simulator gives, not
only its averages: loss epochs for CUBIC and Reno, PROBE_RTT times for BBR.

The kernel runs the example (``cc = "bpf:..."``, registered by tcplab-bpfload); the
reference is the simulator's native twin on the same spec, which the example matches bit
for bit in the simulator (crates/sim/tests/bpf_flows.rs, tests/test_bpf_spec.py), so this
compares the example on the two backends. The CUBIC case is the issue's: one flow, 50
Mbit/s, 100 ms, 1 BDP, 40 s, where the kernel's native CUBIC has its loss epochs at
2.8/7.4/21.6/27.7 s and the simulator's at 2.6/7.2/21.4/27.5 s; with ``HZ 1000``
hard-coded the example ran on this CONFIG_HZ=250 kernel with a clock 4x slow and had two
epochs (2.8 and 19.0 s). Measured here with CONFIG_HZ: simulator 2.45/7.1/21.25/27.35 s,
the example on the kernel 3.2/7.85/22.0/28.1 and 3.05/7.7/21.85/27.95 s (the same
intervals; cwnd back to W_max 4.05-4.2 s after a loss, the simulator's 4.1-4.25 s); with
HZ 1000 hard-coded 3.05/19.3 and 2.75/19.05 s (14.5 s back to W_max). On a machine
loaded by other work the kernel's trajectory wanders (1.8/18.25/22.15/36.65 s once, with
load average 7 on 2 cores), hence a tolerance of one epoch and the shortest regrowth. Needs root and the kernel backend with BPF; skipped elsewhere
with the reason. About 90 s of real time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernel_skips import MEASUREMENT, NEEDS_BPF_ON_KERNEL
from tcplab import api

EXAMPLES = Path(__file__).resolve().parents[2] / "bpf" / "examples"
pytestmark = NEEDS_BPF_ON_KERNEL


def _spec(cc: str, backend: str, duration: str, rate: str, rtt: str) -> dict:
    return {
        "experiment": {"duration": duration, "sample_interval": "50ms", "backend": backend},
        "bottleneck": {"rate": rate, "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": rtt}],
    }


def loss_epochs(series, gap_s: float = 1.0) -> list[float]:
    """Start times (s) of the runs of samples with retransmissions, a run ending after
    ``gap_s`` without any."""
    s = series[series["flow"] == 0]
    t = s["time_s"].to_numpy()
    hits = t[s["retransmits"].to_numpy() > 0]
    return [float(x) for i, x in enumerate(hits) if i == 0 or x - hits[i - 1] > gap_s]


def regrowth_times(series, gap_s: float = 1.0) -> list[float]:
    """For each loss epoch, the time (s) cwnd takes from the epoch's start to regain 95 %
    of the largest cwnd of the second before it: CUBIC's K, the time its cubic function
    takes back to W_max, counted in jiffies / HZ (a clock 4x slow makes it 4x longer).
    Epochs the next loss interrupts first are left out."""
    s = series[series["flow"] == 0]
    t = s["time_s"].to_numpy()
    cwnd = s["cwnd_pkts"].to_numpy()
    out = []
    for e in loss_epochs(series, gap_s):
        before = cwnd[(t >= e - 1.0) & (t < e)]
        after = (t > e + 0.5) & (cwnd >= 0.95 * np.nanmax(before)) if before.size else None
        if after is not None and after.any():
            back = float(t[np.argmax(after)])
            later = [x for x in loss_epochs(series, gap_s) if e < x < back]
            if not later:
                out.append(back - e)
    return out


def probe_rtt_times(series, floor_pkts: float = 4.0, after_s: float = 2.0) -> list[float]:
    """Start times (s) of the cwnd dips to BBR's PROBE_RTT floor (4 packets) after
    startup, a dip ending when cwnd rises again."""
    s = series[series["flow"] == 0]
    t = s["time_s"].to_numpy()
    low = (s["cwnd_pkts"].to_numpy() <= floor_pkts) & (t > after_s)
    starts = np.flatnonzero(low & ~np.concatenate(([False], low[:-1])))
    return [float(t[i]) for i in starts]


def _both(example: str, native: str, **kw):
    kernel = api.run(_spec(f"bpf:{EXAMPLES / example}", "kernel", **kw), report=False)
    sim = api.run(_spec(native, "sim", **kw), report=False)
    return kernel, sim


def _matched(kernel: list[float], sim: list[float], first_s: float, gaps_s: float) -> None:
    """The same events: as many, the first within ``first_s`` (the kernel's start-up,
    handshake included, runs a few hundred ms late), and each interval between
    consecutive events within ``gaps_s`` (the trajectory's shape)."""
    why = f"kernel {kernel} vs simulator {sim}"
    assert len(kernel) == len(sim), why
    assert abs(kernel[0] - sim[0]) <= first_s, why
    for dk, ds in zip(np.diff(kernel), np.diff(sim)):
        assert abs(dk - ds) <= gaps_s, why


def test_cubic_has_the_simulators_loss_epochs_on_a_250_hz_kernel():
    kernel, sim = _both("cubic.bpf.c", "cubic", duration="40s", rate="50Mbps", rtt="100ms")
    k, s = loss_epochs(kernel.series), loss_epochs(sim.series)
    assert len(s) == 4, s  # the 2.6/7.2/21.4/27.5 s
    assert abs(len(k) - len(s)) <= 1, f"kernel {k} vs simulator {s}"
    # CUBIC's K, the time back to W_max after a loss (simulator 4.1 s; 14.5 s on the
    # kernel with HZ 1000 hard-coded): the shortest, which a missed epoch cannot move.
    rk, rs = min(regrowth_times(kernel.series)), min(regrowth_times(sim.series))
    assert 0.75 <= rk / rs <= 1.33, f"regrowth: kernel {rk:.2f} s vs simulator {rs:.2f} s"


def probe_rtt_lengths(series, floor_pkts: float = 4.0, after_s: float = 2.0) -> list[float]:
    """How long (s) each of those dips lasted, in whole sample intervals."""
    s = series[series["flow"] == 0]
    t = s["time_s"].to_numpy()
    low = (s["cwnd_pkts"].to_numpy() <= floor_pkts) & (t > after_s)
    step = float(np.median(np.diff(t)))
    edges = np.flatnonzero(np.diff(np.concatenate(([0], low.astype(int), [0]))))
    return [float(b - a) * step for a, b in zip(edges[::2], edges[1::2])]


def test_bbr_probes_rtt_when_the_simulator_does():
    kernel, sim = _both("bbr.bpf.c", "bbr", duration="40s", rate="20Mbps", rtt="40ms")
    k, s = probe_rtt_times(kernel.series), probe_rtt_times(sim.series)
    assert len(s) == 3, s  # every 10 s: min_rtt_win_sec (10.05, 20.3, 30.5)
    why = f"kernel {k} vs simulator {s}"
    # The program's clock (CONFIG_HZ, jiffies) is what this tests. On the real path a
    # lower RTT sample restarts the 10 s min_rtt window (tcp_bbr.c, bbr_update_min_rtt),
    # so the kernel's probes come at the simulator's times or later: its first came at
    # 10.05-23.05 s in nine 27 s runs here on 2026-12-02 (none within 27 s in two),
    # with the receiver running the program or not, against the simulator's 10.05 s.
    # Hence: a probe within 40 s (a clock 4x slow has none), none earlier than the
    # simulator's first (one 4x fast probes at ~2.5 s), later ones no closer together
    # than 0.75x the simulator's, and each probe as long as the simulator's
    # (bbr_probe_rtt_mode_ms, 200 ms in jiffies, plus a round: 4x off either way would
    # make it ~0.8 s or ~0.1 s).
    assert k, why
    assert k[0] >= s[0] - 1.0, why
    assert len(k) <= len(s), why
    for dk, ds in zip(np.diff(k), np.diff(s)):
        assert dk >= 0.75 * ds, why
    lk, ls = probe_rtt_lengths(kernel.series), probe_rtt_lengths(sim.series)
    typical = float(np.median(ls))
    assert all(0.5 * typical <= x <= 1.5 * typical for x in lk), (lk, ls)


@MEASUREMENT
@pytest.mark.xfail(
    strict=False,
    reason="on 2026-12-02 the kernel's Reno loss epochs scattered from run to run "
    "(regrowth 2.3-4.8 s against the simulator's 4.25 s, 5 of 9 runs off by more than "
    "0.5 s) with the receiver on the program, on Reno or on the host's default; cause "
    "not found (issue 42)",
)
def test_reno_has_the_simulators_loss_epochs():
    kernel, sim = _both("reno.bpf.c", "reno", duration="20s", rate="20Mbps", rtt="40ms")
    k, s = loss_epochs(kernel.series), loss_epochs(sim.series)
    assert len(s) >= 2, s
    _matched(k, s, first_s=1.0, gaps_s=0.5)
