"""scripts/fidelity.py's goals column: a missed goal carries the 95 % interval of its gap
over the seeds, and says "undecided" where the interval reaches inside the goal
(hand-made seed means; intervals computed by hand)."""

from __future__ import annotations

from script_module import script_module


def _ms(sim: list[dict], kernel: list[dict]) -> dict:
    return {"sim": sim, "kernel": kernel}


def test_a_decided_miss_and_an_undecided_one():
    goals = script_module("fidelity")._goals
    # Backlog 20, 21, 22 against 25, 26, 27: gap 5 (+24 %), standard error sqrt(2/3), 4
    # degrees of freedom, half-width 2.267: [2.73, 7.27] / 21 = [+13 %, +35 %], outside.
    b = "mean backlog pkts"
    ms = _ms([{b: 20.0}, {b: 21.0}, {b: 22.0}], [{b: 25.0}, {b: 26.0}, {b: 27.0}])
    assert goals(ms) == "backlog +24 % [+13 %, +35 %]"
    # 10, 11, 12 against 10.5, 11.5, 13.5: gap 0.83 (+8 %); variances 1 and 2.333, so
    # the standard error is sqrt(1/3 + 2.333/3) = 1.054 at Welch's 1.2346 / 0.3580 = 3.45
    # degrees of freedom, t = 2.96: 0.833 +- 3.12 = [-2.29, +3.95] / 11 = [-21 %, +36 %].
    ms = _ms([{b: 10.0}, {b: 11.0}, {b: 12.0}], [{b: 10.5}, {b: 11.5}, {b: 13.5}])
    assert goals(ms) == "backlog +8 % [-21 %, +36 %] undecided"


def test_met_and_single_seeds_stay_as_they_were():
    goals = script_module("fidelity")._goals
    b = "mean backlog pkts"
    assert goals(_ms([{b: 20.0}, {b: 21.0}], [{b: 20.5}, {b: 21.5}])) == "met"
    # One seed a side: no interval to give.
    assert goals(_ms([{b: 20.0}], [{b: 30.0}])) == "backlog +50 %"
