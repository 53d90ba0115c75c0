"""A kernel run's report: every panel of the run
report has data on both backends of a ``--backend sim,kernel`` run, the kernel's series
mean what the simulator's mean (``rtt_ms`` the latest RTT sample, ``cc_bw_bps`` BBR's
bandwidth, no "unset" pacing rate). The kernel run needs root, network namespaces, tun and
ip (CI runs as root); elsewhere it is skipped with the reason. The record-decoding tests
run everywhere."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from tcplab.backends.kernel import requirements, tcpinfo
from tcplab.cli import app as cli

_missing = requirements.missing()
needs_kernel = pytest.mark.skipif(
    bool(_missing),
    reason="kernel backend unavailable here: " + "; ".join(r.detail for r in _missing),
)

SPEC = """
[experiment]
name = "kernel report"
duration = "4s"
sample_interval = "100ms"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "bbr"
rtt = "40ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
"""

NO_DATA = ("not recorded", "no algorithm reports", "needs two or more flows")


def _info(**fields: int):
    """A stand-in for ``tcpinfo.tcp_info``: every field 0 unless given."""
    from collections import defaultdict

    return lambda sock: defaultdict(int, fields)


def test_an_unset_pacing_rate_is_no_rate(monkeypatch):
    # tcp_get_info: an unset sk_pacing_rate (~0UL) is reported as ~0ULL, 1.5e20 bit/s.
    monkeypatch.setattr(tcpinfo, "tcp_info", _info(pacing_rate=2**64 - 1))
    assert math.isnan(tcpinfo.sample(None, bbr=False)["pacing_rate_bps"])
    monkeypatch.setattr(tcpinfo, "tcp_info", _info(pacing_rate=1_250_000))
    assert tcpinfo.sample(None, bbr=False)["pacing_rate_bps"] == 10e6


def test_bbr_before_its_init_has_no_min_rtt(monkeypatch):
    # TCP_CC_INFO during the handshake: bbr_init has not run, bw and min_rtt are 0.
    monkeypatch.setattr(tcpinfo, "tcp_info", _info())
    monkeypatch.setattr(
        tcpinfo,
        "bbr_info",
        lambda sock: {"bw": 0, "min_rtt_us": 0, "pacing_gain": 0, "cwnd_gain": 0},
    )
    assert math.isnan(tcpinfo.sample(None, bbr=True)["cc_min_rtt_ms"])
    monkeypatch.setattr(
        tcpinfo,
        "bbr_info",
        lambda sock: {"bw": 1000, "min_rtt_us": 40_174, "pacing_gain": 739, "cwnd_gain": 739},
    )
    assert tcpinfo.sample(None, bbr=True)["cc_min_rtt_ms"] == 40.174


def _panels_without_data(run_dir) -> list[str]:
    """Titles of the run report's panels that draw no data (a "not recorded" note, or
    only lines without one finite point)."""
    import matplotlib

    matplotlib.use("Agg")
    from tcplab.report.run_report import draw_report
    from tcplab.runs.result import load_run

    fig = draw_report(load_run(run_dir))
    empty = []
    for ax in fig.axes:
        title = ax.get_title(loc="left")
        if not title:  # the summary text, the legend, twin axes
            continue
        notes = [t.get_text() for t in ax.texts]
        finite = any(
            pd.Series(line.get_ydata(), dtype=float).notna().any() for line in ax.get_lines()
        ) or bool(ax.collections)
        if any(n.startswith(NO_DATA) for n in notes) or not finite:
            empty.append(title)
    return empty


@needs_kernel
def test_every_report_panel_has_data_on_both_backends(tmp_path):
    spec = tmp_path / "k.toml"
    spec.write_text(SPEC)
    out = tmp_path / "both"
    assert cli.main(["run", str(spec), "-o", str(out), "--backend", "sim,kernel", "-q"]) == 0
    assert _panels_without_data(out / "sim") == []
    assert _panels_without_data(out / "kernel") == []
    s = pd.read_parquet(out / "kernel" / "series.parquet")
    bbr = s[s["flow"] == 0]
    # The latest RTT sample, measured on the wire, from the first sample after the
    # handshake: at least the 40 ms propagation RTT (a full segment adds its 1.2 ms of
    # serialization at 10 Mbit/s, but the kernel also sends shorter ones: a clean-clone
    # run read 41.0 ms); at most that plus a full segment's serialization, a full 1-BDP
    # queue (34 packets, 40.8 ms), one delayed-ACK timeout (TCP_DELACK_MIN, 40 ms) and
    # 5 ms of the emulator's lateness on a loaded machine. Most samples carry a queue and
    # a full segment: the median is above 41.2 ms.
    rtt = s["rtt_ms"].dropna()
    assert len(rtt) >= len(s) - 2 * 2
    assert rtt.min() >= 40.0 and rtt.max() <= 41.2 + 40.8 + 40 + 5
    assert rtt.median() >= 41.2
    # No "unset" pacing rate: every pacing rate is below 10x the link rate.
    assert (s["pacing_rate_bps"].dropna() < 100e6).all()
    assert bbr["cc_bw_bps"].notna().any() and bbr["cc_btlbw_bps"].isna().all()
