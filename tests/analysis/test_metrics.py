"""Each metric on a small hand-made series, with the arithmetic written out."""

import math

import numpy as np
import pandas as pd
import pytest
from tcplab.analysis import metrics as m


def test_jain_index_equal_shares_is_one():
    assert m.jain_index([5, 5, 5, 5]) == pytest.approx(1.0)


def test_jain_index_one_flow_takes_all_is_one_over_n():
    assert m.jain_index([10, 0, 0, 0]) == pytest.approx(0.25)


def test_jain_index_hand_computed():
    # (1 + 3)^2 / (2 * (1 + 9)) = 16 / 20 = 0.8
    assert m.jain_index([1, 3]) == pytest.approx(0.8)


def test_jain_index_of_nothing_is_nan():
    assert math.isnan(m.jain_index([]))
    assert math.isnan(m.jain_index([0, 0]))


def _flows(starts, stops):
    return pd.DataFrame({"start_s": starts, "stop_s": stops}, index=range(len(starts)))


def test_jain_over_time_uses_only_active_flows():
    # flow 1 joins at 0.2 s: at t=0.1, 0.2 only flow 0 is active (NaN: fewer than two flows);
    # at 0.3: [6, 2] -> 64 / (2 * 40) = 0.8; at 0.4: [4, 4] -> 1.0
    thr = pd.DataFrame(
        {0: [10.0, 10.0, 6.0, 4.0], 1: [0.0, 0.0, 2.0, 4.0]}, index=[0.1, 0.2, 0.3, 0.4]
    )
    f = m.jain_over_time(thr, _flows([0.0, 0.2], [1.0, 1.0]))
    assert math.isnan(f.iloc[0]) and math.isnan(f.iloc[1])
    assert f.iloc[2] == pytest.approx(0.8)
    assert f.iloc[3] == pytest.approx(1.0)


def test_t_f95_skips_short_dips_but_not_long_ones():
    # 1 s samples after T_join = 0: F below 0.95 for 3 s (t=1..3), fair at t=4,
    # a 2 s dip (t=6,7: allowed), then fair to the end.
    t = np.arange(1, 13, dtype=float)
    f = np.array([0.5, 0.6, 0.7, 0.99, 0.99, 0.8, 0.9, 0.99, 0.99, 0.99, 0.99, 0.99])
    # the last dip longer than 2 s ends at t=3; F is fair from the interval (3, 4] -> 3 s
    assert m.t_f95(t, f, 0.0, interval_s=1.0) == pytest.approx(3.0)


def test_t_f95_with_a_three_second_dip_restarts_the_clock():
    t = np.arange(1, 11, dtype=float)
    f = np.array([0.99, 0.99, 0.5, 0.5, 0.5, 0.99, 0.99, 0.99, 0.99, 0.99])
    # the dip t=3..5 lasts 3 s > 2 s: stable from the interval (5, 6] -> 5 s
    assert m.t_f95(t, f, 0.0, interval_s=1.0) == pytest.approx(5.0)


def test_t_f95_never_reached_is_nan():
    t = np.arange(1, 6, dtype=float)
    assert math.isnan(m.t_f95(t, [0.99, 0.5, 0.5, 0.5, 0.5], 0.0, interval_s=1.0))


def test_t_f95_is_relative_to_t_join():
    t = np.arange(1, 11, dtype=float)
    f = np.array([0.5] * 10)
    f[6:] = 0.99  # fair from t=7 on, i.e. from the interval (6, 7]; joined at 2 s -> 4 s
    assert m.t_f95(t, f, 2.0, interval_s=1.0) == pytest.approx(4.0)


def test_f_avg_window():
    t = np.arange(1, 41, dtype=float)
    f = np.where(t <= 10, 0.5, 1.0)
    # T_join = 5: window (5, 35] holds t=6..35: 5 samples of 0.5 and 25 of 1.0 -> 27.5/30
    assert m.f_avg(t, f, 5.0) == pytest.approx(27.5 / 30)


def test_equilibrium_time_on_one_second_bins():
    # 0.5 s samples; flow 1 joins at 0; unequal for the first 4 s, equal afterwards.
    idx = np.arange(1, 21) * 0.5
    a = np.where(idx <= 4, 9.0, 5.0)
    b = np.where(idx <= 4, 1.0, 5.0)
    thr = pd.DataFrame({0: a, 1: b}, index=idx)
    # 1 s bins: (0,1]..(3,4] hold [9,1] -> F = 100/164 = 0.61; from (4,5] on F = 1 -> 4 s
    assert m.equilibrium_time(thr, _flows([0.0, 0.0], [10.0, 10.0]), 0.0) == pytest.approx(4.0)


def test_rate_and_retransmission_rate():
    # 1 250 000 bytes in 2 s = 10 Mbit / 2 s = 5 Mbit/s
    assert m.rate_bps(1_250_000, 2.0) == pytest.approx(5e6)
    assert m.retransmission_rate(3, 300) == pytest.approx(0.01)
    assert math.isnan(m.retransmission_rate(0, 0))


def test_capacity_and_utilization_with_a_rate_change():
    # 10 Mbit/s for 20 s then 20 Mbit/s for 10 s: 200 + 200 = 400 Mbit
    cap = m.capacity_bits(10e6, [(20.0, 20e6)], 30.0)
    assert cap == pytest.approx(400e6)
    # 40 MB of goodput = 320 Mbit of 400 -> 0.8
    assert m.utilization(40e6, cap) == pytest.approx(0.8)


def test_queueing_delay():
    # 15 000 bytes at 10 Mbit/s = 120 000 bit / 1e7 = 12 ms; at 20 Mbit/s 6 ms
    rates = m.rate_at(np.array([1.0, 25.0]), 10e6, [(20.0, 20e6)])
    assert list(m.queueing_delay_ms([15_000, 15_000], rates)) == pytest.approx([12.0, 6.0])


def test_rtt_stats_skip_empty_intervals():
    mean, p95 = m.rtt_stats([10.0, float("nan"), 20.0, 30.0])
    assert mean == pytest.approx(20.0)
    # numpy linear percentile of [10, 20, 30]: position 0.95 * 2 = 1.9 -> 20 + 0.9 * 10 = 29
    assert p95 == pytest.approx(29.0)


def test_share_and_share_vs_fair_share():
    assert m.share([3, 1]) == pytest.approx([0.75, 0.25])
    # bbr: 1 flow of 4 (0.25) takes 0.6 of the bytes -> +0.35; cubic 3 of 4 take 0.4 -> -0.35
    d = m.share_vs_fair_share({"bbr": 6.0, "cubic": 4.0}, {"bbr": 1, "cubic": 3})
    assert d["bbr"] == pytest.approx(0.35) and d["cubic"] == pytest.approx(-0.35)


def test_bdp_overestimation():
    # 10 Mbit/s * 40 ms / 8 = 50 000 bytes BDP; 100 packets of 1500 bytes = 150 000 -> 3.0
    assert m.bdp_overestimation([100], 1500, [10e6], 0.040)[0] == pytest.approx(3.0)


def test_probe_rtt_overlap_counts_only_simultaneous_probe_rtt():
    modes = pd.DataFrame(
        {
            0: ["PROBE_BW", "PROBE_RTT", "PROBE_RTT", "PROBE_BW"],
            1: ["PROBE_RTT", "PROBE_RTT", "PROBE_BW", "PROBE_BW"],
        },
        index=[0.1, 0.2, 0.3, 0.4],
    )
    # only t=0.2 has both in PROBE_RTT -> 1 sample * 0.1 s
    assert m.probe_rtt_overlap_s(modes, 0.1) == pytest.approx(0.1)


def test_rebin_averages_into_bins_ending_at_multiples():
    thr = pd.DataFrame({0: [1.0, 3.0, 5.0, 7.0]}, index=[0.5, 1.0, 1.5, 2.0])
    b = m.rebin(thr, 1.0)
    assert list(b.index) == [1.0, 2.0] and list(b[0]) == [2.0, 6.0]


def _bbr_run(modes_by_flow, bw_by_flow, rate="10Mbps", backlog=None):
    """A hand-made run of BBR flows sampled every 100 ms: the modes and bandwidth estimates
    given, nothing else of interest."""
    from tcplab.analysis.rundata import RunData
    from tcplab.specs.load import parse_spec

    n = len(modes_by_flow[0])
    spec = parse_spec(
        {
            "experiment": {"duration": f"{n * 100}ms", "sample_interval": "100ms"},
            "bottleneck": {"rate": rate, "buffer": "50pkt"},
            "flows": [{"cc": "bbr", "rtt": "20ms", "count": len(modes_by_flow)}],
        },
        check_algorithms=False,
    )
    t = np.round(np.arange(1, n + 1) * 0.1, 6)
    rows = [
        {
            "time_s": ts,
            "flow": f,
            "cc": "bbr",
            "cc_mode": modes[k],
            "cc_btlbw_bps": bws[k],
            "throughput_bps": 1e6,
            "rtt_ms": 20.0,
        }
        for f, (modes, bws) in enumerate(zip(modes_by_flow, bw_by_flow))
        for k, ts in enumerate(t)
    ]
    series = pd.DataFrame(rows)
    queue = pd.DataFrame(
        {"time_s": t, "backlog_pkts": backlog if backlog is not None else np.zeros(n)}
    )
    k = len(modes_by_flow)
    flows = pd.DataFrame(
        {
            "flow": range(k),
            "group": [0] * k,
            "cc": ["bbr"] * k,
            "start_s": [0.0] * k,
            "stop_s": [n / 10] * k,
            "rtt_ms": [20.0] * k,
        }
    ).set_index("flow")
    return RunData(spec, series, queue, flows)


def test_bw_estimate_and_probe_rtt_duration_per_flow():
    """PROBE_BW samples carry 2, 4, 6 and 8 Mbit/s: their mean is 5 Mbit/s (the 1 and 9
    Mbit/s of STARTUP and PROBE_RTT do not count). PROBE_RTT phases of 2 and 1 samples at
    100 ms: 0.15 s on average."""
    from tcplab.analysis.summary import flow_metrics

    modes = [
        "STARTUP",
        "PROBE_BW",
        "PROBE_BW",
        "PROBE_RTT",
        "PROBE_RTT",
        "PROBE_BW",
        "PROBE_RTT",
        "PROBE_BW",
    ]
    bw = [1e6, 2e6, 4e6, 9e6, 9e6, 6e6, 9e6, 8e6]
    row = flow_metrics(_bbr_run([modes], [bw])).loc[0]
    assert row["mean_bw_estimate_bps"] == pytest.approx(5e6)
    assert row["mean_probe_rtt_duration_s"] == pytest.approx(0.15)
    assert row["probe_rtt_entries"] == 2


def test_summed_bw_estimates_over_the_link_rate_and_the_persistent_backlog():
    """Two flows on 10 Mbit/s. Both are past start-up at samples 2-4 only: the sums are 6+6,
    7+5 and 8+8 Mbit/s, i.e. 1.2, 1.2 and 1.6 of the rate, mean 4.0/3 = 1.3333. The backlog
    0, 1, ..., 4 has its 10th percentile at 0.4 (linear interpolation between the 1st and
    2nd of five samples)."""
    from tcplab.analysis.summary import summarize

    a = ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT", "PROBE_BW"]
    b = ["STARTUP", "STARTUP", "PROBE_BW", "PROBE_BW", "PROBE_BW"]
    doc = summarize(
        _bbr_run(
            [a, b], [[1e6, 5e6, 6e6, 7e6, 8e6], [1e6, 2e6, 6e6, 5e6, 8e6]], backlog=np.arange(5.0)
        )
    )
    assert doc["aggregate"]["bw_estimate_sum_over_rate_mean"] == pytest.approx(4.0 / 3)
    assert doc["aggregate"]["p10_backlog_pkts"] == pytest.approx(0.4)


def test_probe_bw_cycle_period_counts_only_starts_within_probe_bw():
    """Probing (gain 1.25) starts at samples 1, 5 and 9 (0.2, 0.6, 1.0 s): periods 0.4 and
    0.4 s. The start at sample 13 (1.4 s) follows a PROBE_RTT at 1.2 s, so 1.0 -> 1.4 s
    does not count: mean 0.4 s."""
    from tcplab.analysis.summary import flow_metrics

    modes = ["PROBE_BW"] * 11 + ["PROBE_RTT"] + ["PROBE_BW"] * 3
    gains = [1.0, 1.25, 0.75, 1, 1, 1.25, 0.75, 1, 1, 1.25, 0.75, 1, 1, 1.25, 0.75]
    run = _bbr_run([modes], [[5e6] * 15])
    run.series["cc_pacing_gain"] = gains
    assert flow_metrics(run).loc[0, "mean_probe_bw_cycle_s"] == pytest.approx(0.4)


def test_probe_rtt_sync_counts_from_the_last_start_to_the_first_common_probe_rtt():
    """Flow 1 starts at 0.3 s. Flow 0 is in PROBE_RTT at 0.2 s (before the join: not
    counted) and at 0.6-0.7 s, flow 1 at 0.5 and 0.7 s: both first at 0.7 s, 0.4 s after
    the join."""
    from tcplab.analysis.summary import probe_rtt_sync_s

    t = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    modes = pd.DataFrame(
        {
            0: [
                "PROBE_BW",
                "PROBE_RTT",
                "PROBE_RTT",
                "PROBE_BW",
                "PROBE_BW",
                "PROBE_RTT",
                "PROBE_RTT",
                "PROBE_BW",
            ],
            1: [
                pd.NA,
                pd.NA,
                "STARTUP",
                "PROBE_BW",
                "PROBE_RTT",
                "PROBE_BW",
                "PROBE_RTT",
                "PROBE_BW",
            ],
        },
        index=t,
    )
    assert probe_rtt_sync_s(modes, pd.Series({0: 0.0, 1: 0.3})) == pytest.approx(0.4)
    never = modes.replace("PROBE_RTT", "PROBE_BW")
    assert math.isnan(probe_rtt_sync_s(never, pd.Series({0: 0.0, 1: 0.3})))
