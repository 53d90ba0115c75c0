"""scripts/ns3_variants.py and experiments/ns3/tcp-variants-comparison.toml: the spec runs
for every algorithm mapped from ns-3, its network is ns-3's scenario (the handshake's
RTT computed by hand from the links), the metrics are computed as stated, and the ns-3 side
is skipped with a message where ns3 is not installed (it is not a tcplab dependency)."""

from __future__ import annotations

import math

import pytest
from script_module import script_module
from tcplab.specs.load import tomllib  # tomli before Python 3.11


def _mod():
    return script_module("ns3_variants")


def test_the_sweep_lists_exactly_the_mapped_algorithms():
    mod = _mod()
    sweep = tomllib.loads(mod.SPEC.read_text())["sweep"]["flows[0].cc"]
    assert sorted(sweep) == sorted(set(mod.MAPPING.values()))
    assert "TcpDctcp" in mod.LEFT_OUT and "TcpDctcp" not in mod.MAPPING


def test_scenario_constants_are_the_examples():
    # tcp-variants-comparison.cc: 400 - 20 - (20 + 20) = 340-byte segments; the queue
    # 2e6 / 8 x 2 x (45 + 0.01) ms = 22505 bytes / 400 = 56 packets; stop 100.1 - 3 s.
    mod = _mod()
    assert mod.ADU_BYTES == 340
    assert mod.QUEUE_PKTS == 56
    assert mod.APP_STOP_S == pytest.approx(97.1)


@pytest.mark.engine
@pytest.mark.parametrize("cc", sorted(set(_mod().MAPPING.values())))
def test_spec_runs_two_seconds_for_every_mapped_algorithm(cc):
    samples = _mod().tcplab_samples(cc, duration="2s")
    assert samples["t"][-1] == pytest.approx(2.0)
    # The handshake's round trip, by hand, is the flow's srtt until data is acknowledged
    # (0.1 s < 90 + 92 ms): propagation 2 x (45 + 0.01) ms = 90.02 ms, and a 54-byte
    # header-only packet serialized each way at 10 Mbit/s (0.0432 ms), 2 Mbit/s (0.216
    # ms) and the receiver's default access link, 100 x 2 Mbit/s (0.00216 ms): 90.5428 ms.
    assert samples["t"][0] == pytest.approx(0.1)
    assert samples["srtt_ms"][0] == pytest.approx(90.5428, abs=0.001)
    # No data RTT below the path's floor: the same with a 394-byte data packet one way
    # (0.3152 + 1.576 + 0.01576 ms) and a 54-byte ACK back: 92.188 ms.
    floor = 90.02 + 0.3152 + 1.576 + 0.01576 + 0.00216 + 0.216 + 0.0432
    rtts = [r for r in samples["rtt_ms"] if not math.isnan(r)]
    assert rtts, f"{cc}: no RTT sample in 2 s"
    assert min(rtts) >= floor - 0.001
    # Data reached the receiver, no faster than the 2 Mbit/s link carries 340 of every
    # 394 bytes (1.7259 Mbit/s) after the 92 ms the first segment needs.
    assert 0 < samples["rx_bytes"][-1] <= 2e6 * 340 / 394 / 8 * (2.0 - 0.092)


def test_summary_by_hand():
    nan = math.nan
    samples = {
        "t": [0.0, 0.1, 0.2, 0.3],
        "rx_bytes": [0, 1000, 3000, 9000],
        "cwnd_pkts": [10, 10, 20, 30],
        "rtt_ms": [nan, nan, 100.0, 120.0],
        "backlog_pkts": [0, 1, 3, 8],
        "retx": [0, 0, 1, 4],
        "drops": [0, 0, 2, 5],
    }
    # Window (0, 0.2]: t = 0.1 and 0.2. goodput 3000 B x 8 / 0.2 s = 0.12 Mbit/s; the RTT
    # mean skips the NaN (100 ms); cwnd (10 + 20) / 2; backlog (1 + 3) / 2, max 3.
    got = _mod().summarize(samples, window_end=0.2)
    assert got == {
        "goodput_mbps": pytest.approx(0.12),
        "retransmissions": 1,
        "bottleneck_drops": 2,
        "mean_rtt_ms": 100.0,
        "mean_cwnd_pkts": 15.0,
        "mean_backlog_pkts": 2.0,
        "max_backlog_pkts": 3,
        "loss_epochs": 1,
    }


def test_loss_epochs_by_hand():
    # Drops in the samples at 0.1 s, 0.5 s (0.4 s later: the same epoch) and 2.0 s (1.5 s
    # after the last drop, more than EPOCH_GAP_S = 1 s: a second epoch).
    t = [0.1, 0.5, 1.0, 2.0, 2.1]
    drops = [3, 5, 5, 6, 6]
    samples = {"t": t, "rx_bytes": [1] * 5, "cwnd_pkts": [1] * 5, "rtt_ms": [1] * 5}
    samples |= {"backlog_pkts": [0] * 5, "retx": [0] * 5, "drops": drops}
    assert _mod().summarize(samples, window_end=2.1)["loss_epochs"] == 2


def test_without_ns3_the_ns3_side_is_skipped_with_a_message(monkeypatch, tmp_path, capsys):
    mod = _mod()
    monkeypatch.setattr(mod, "ns3_available", lambda: False)
    assert mod.main(["--side", "ns3", "-o", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "ns-3 side skipped" in err and "pip install ns3==3.44.post0" in err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_algorithm_is_refused_naming_the_allowed(tmp_path, capsys):
    assert _mod().main(["--side", "tcplab", "--algorithms", "TcpDctcp", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--algorithms: TcpDctcp not compared" in err and "TcpCubic" in err and "ECN" in err
