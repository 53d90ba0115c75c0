"""Verdicts over seeds (tcplab.reproduce.judge), with hand-computed intervals.

Student's t for 95 % and 2 degrees of freedom is 4.303, so three seeds with standard
deviation s give a half-width of 4.303 s / sqrt(3) = 2.484 s.
"""

import math

import pytest
from tcplab.reproduce.judge import half_width, judge


def test_half_width_by_hand():
    assert half_width([1.0, 2.0, 3.0]) == pytest.approx(2.4841, abs=1e-4)  # s = 1
    assert math.isnan(half_width([5.0]))


def test_a_difference_beyond_the_noise_holds():
    # mean 1.0, s = 0.1, half-width 0.248: [0.752, 1.248] > 0.5
    j = judge(">=", [1.0, 1.1, 0.9], [0.5] * 3)
    assert (j.outcome, j.seeds_holding) == ("holds", 3)
    assert j.ci == pytest.approx(0.2484, abs=1e-4)


def test_a_difference_at_noise_level_is_inconclusive():
    # TUM Fig. 12's case: 0.879 against 0.877. mean margin 0.002, s = 0.001, half-width
    # 0.00248: the interval [-0.0005, 0.0045] straddles 0.
    j = judge(">=", [0.879, 0.880, 0.878], [0.877] * 3)
    assert j.outcome == "inconclusive" and j.seeds_holding == 3


def test_a_failure_beyond_the_noise_fails():
    j = judge("<=", [10.0, 11.0, 12.0], [5.0] * 3)  # margins -5, -6, -7: hi = -3.5 < 0
    assert (j.outcome, j.seeds_holding) == ("fails", 0)


def test_pairing_counts_a_reversed_seed():
    # ACD's case: ours below the reference on average, but one seed reverses it. Paired
    # margins (ref - ours) +10, -2, +12 (mean 6.67, s = 7.57, half-width 18.8): the
    # interval straddles 0, inconclusive, and the check holds in 2 of 3 seeds.
    ours = [90.0, 102.0, 88.0]
    refs = [100.0, 100.0, 100.0]
    j = judge("<", ours, [1.0 * r for r in refs])
    assert j.outcome == "inconclusive" and j.seeds_holding == 2


def test_within_a_ratio_reads_ratio_points():
    # ours / ref = 0.83, 0.84, 0.82 against 0.85 +- 0.05: the interval of the ratio's
    # distance (-0.02 +- 0.0248) lies inside [-0.05, 0.05].
    refs = [100.0, 200.0, 50.0]
    ours = [83.0, 168.0, 41.0]
    j = judge("within", ours, [0.85 * r for r in refs], 0.05, refs)
    assert (j.outcome, j.seeds_holding) == ("holds", 3)
    j = judge("within", ours, [0.95 * r for r in refs], 0.05, refs)  # -0.12 +- 0.025
    assert j.outcome == "fails"


def test_one_seed_decides_nothing():
    # n = 1: no interval, so no decision either way, however far the value is
    for op, ours, target in ((">", 0.9, 0.5), (">", 0.1, 0.5), (">=", 0.5, 0.5)):
        j = judge(op, [ours], [target])
        assert (j.outcome, j.reason) == ("inconclusive", "n=1")
    j = judge("within", [3.0], [0.0], 0.1)
    assert (j.outcome, j.reason) == ("inconclusive", "n=1")


def test_identical_seeds_are_one_value_not_a_sample():
    # Three seeds of a run that draws no randomness: the interval has no width, which
    # is not certainty; the judge says identical instead of deciding
    j = judge(">=", [0.97, 0.97, 0.97], [0.9] * 3)
    assert (j.outcome, j.reason, j.seeds_holding) == ("inconclusive", "identical", 3)
    # ours identical but a paired reference that varies: a sample of margins
    j = judge("<", [10.0, 10.0, 10.0], [20.0, 21.0, 22.0])
    assert (j.outcome, j.reason) == ("holds", "")


def test_runs_that_differ_but_agree_on_the_value_decide_it():
    # A link kept busy in every seed: the runs differ (runs_differ, the runner compares
    # their summaries) yet utilisation is 0.97 in each; that is a value the seeds agree on,
    # decided against 0.9 with a zero-width interval, and fails against 0.99.
    j = judge(">=", [0.97, 0.97, 0.97], [0.9] * 3, runs_differ=True)
    assert (j.outcome, j.reason, j.ci) == ("holds", "", 0.0)
    j = judge(">=", [0.97, 0.97, 0.97], [0.99] * 3, runs_differ=True)
    assert (j.outcome, j.reason) == ("fails", "")


def test_a_difference_below_the_practical_threshold_is_the_same():
    # bbrprime-fig08 #2's case: 0.9364 against 0.9370, paired over three seeds whose
    # margins are -0.0006, -0.0005, -0.0007 (mean -0.0006, s = 0.0001, half-width
    # 0.000248). Without a threshold ">" fails "beyond the noise"; with theta = 0.01
    # (utilisation, thresholds.py) the interval [-0.00085, -0.00035] is within +-0.01:
    # the two are the same, so "more" fails as a decided null, and "at least" holds.
    ours = [0.9364, 0.9365, 0.9363]
    targets = [0.9370] * 3
    assert judge(">", ours, targets, threshold=0.01).outcome == "fails"
    assert judge(">=", ours, targets, threshold=0.01).outcome == "holds"
    # a real difference of 0.05 +- 0.0025 clears theta = 0.01: "more" holds
    assert judge(">", [0.95, 0.951, 0.949], [0.9] * 3, threshold=0.01).outcome == "holds"
    # a difference of 0.012 +- 0.0025 straddles theta (0.0095-0.0145): undecided
    j = judge(">", [0.912, 0.913, 0.911], [0.9] * 3, threshold=0.01)
    assert j.outcome == "inconclusive" and j.reason == ""


def test_a_decided_null_effect_is_not_inconclusive():
    # ACD's case: ACD's retransmission rate against BBR's at 30 seeds, paired margins
    # (ref - ours) alternating +0.001 / -0.001: mean 0, half-width 0.00037. Without a
    # threshold the interval straddles 0 (inconclusive forever); with theta = 0.007
    # (5 % of 0.14) it lies inside the band: "fewer" fails, decided.
    refs = [0.14] * 30
    ours = [0.14 + (0.001 if k % 2 else -0.001) for k in range(30)]
    assert judge("<", ours, refs).outcome == "inconclusive"
    assert judge("<", ours, refs, threshold=0.007).outcome == "fails"


def test_the_thresholds_by_metric():
    from tcplab.reproduce.thresholds import practical

    assert practical("jain_index", 0.6, 0.9) == 0.01
    assert practical("windows.back.utilization", 0.9) == 0.01
    assert practical("share[flow0]", 0.3) == 0.01
    assert practical("retransmitted_packets", 4000, 2000) == pytest.approx(200)  # 5 %
    assert practical("retransmitted_packets", 3, 0) == 1.0  # the one-packet floor
    assert practical("mean_rtt_ms[flow0]", 100.0) == pytest.approx(2.0)  # 2 %
    assert practical("mean_rtt_ms[flow0]", 10.0) == 0.5  # the 0.5 ms floor
    assert practical("throughput_bps[flow0]", 9.7e6) == pytest.approx(9.7e4)
    assert practical("t_f95_s", 30.0) == pytest.approx(1.5)
    assert practical("bdp_overestimation_mean", 2.0) == 0.02  # default 1 %
    assert practical(None, 5.0) == 0.0


def test_undefined_values_are_undefined():
    assert judge(">=", [math.nan, 1.0], [0.5, 0.5]).outcome == "undefined"
    assert judge(">=", [math.nan], [0.5]).outcome == "undefined"  # before n = 1
    assert judge("within", [1.0], [0.0], 0.1, [0.0]).outcome == "undefined"


def test_a_zero_reference_is_a_plain_comparison_outside_within():
    # t_f95 of 0 s against a reference of 0 s: "<" fails (0 < 0 is false), not undefined.
    # (ours not identical across seeds: margins -1, -1.1, -1 lie below the edge)
    j = judge("<", [1.0, 1.1, 1.0], [0.0, 0.0, 0.0], refs=[0.0, 0.0, 0.0])
    assert j.outcome == "fails"
