"""scripts/jiffies_phase.py: the shifted spec and the two spreads (numbers by hand)."""

from __future__ import annotations

import pytest
from script_module import script_module


def _phase():
    return script_module("jiffies_phase")


SPEC = {
    "experiment": {"duration": "10s", "seed": 1},
    "bottleneck": {"rate": "10Mbps"},
    "tcp": {"hz": 1000},
    "flows": [{"cc": "cubic", "rtt": "40ms"}, {"cc": "bbr", "rtt": "40ms", "start": "3s"}],
}


def test_every_flow_moves_by_the_phase_and_keeps_its_spacing():
    d = _phase().shifted(SPEC, 1500, 250, 7)
    assert [f["start"] for f in d["flows"]] == ["1500us", "3001500us"]
    assert d["tcp"]["hz"] == 250 and d["experiment"]["seed"] == 7
    assert SPEC["tcp"]["hz"] == 1000 and "start" not in SPEC["flows"][0]  # not mutated


def test_spreads_by_hand():
    # Phase 0 seeds 1, 3 and phase 1 seeds 2, 4: each phase's standard deviation over
    # seeds is sqrt(2) = 1.4142; the phase means 2 and 3 have standard deviation
    # sqrt(0.5) = 0.7071; the mean of the means is 2.5.
    table = {0: [{"m": 1.0}, {"m": 3.0}], 1: [{"m": 2.0}, {"m": 4.0}]}
    mean, seeds, phases = _phase().spreads(table)["m"]
    assert mean == pytest.approx(2.5)
    assert seeds == pytest.approx(1.41421, abs=1e-5)
    assert phases == pytest.approx(0.70711, abs=1e-5)
