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


def test_one_seed_decides_without_an_interval():
    assert judge(">", [0.51], [0.5]).outcome == "holds"
    assert judge(">", [0.5], [0.5]).outcome == "fails"
    assert judge(">=", [0.5], [0.5]).outcome == "holds"


def test_undefined_values_are_undefined():
    assert judge(">=", [math.nan, 1.0], [0.5, 0.5]).outcome == "undefined"
    assert judge("within", [1.0], [0.0], 0.1, [0.0]).outcome == "undefined"


def test_a_zero_reference_is_a_plain_comparison_outside_within():
    # t_f95 of 0 s against a reference of 0 s: "<" fails (0 < 0 is false), not undefined.
    j = judge("<", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], refs=[0.0, 0.0, 0.0])
    assert j.outcome == "fails"
