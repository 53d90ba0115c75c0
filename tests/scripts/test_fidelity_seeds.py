"""scripts/fidelity_seeds.py: the suite's seeds and the scenarios run on their own
(``--scenario-seeds``, FIDELITY.md finding 41), and fidelity.py running and tabulating a
scenario on the seeds the plan gives it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from script_module import script_module

REPO = Path(__file__).resolve().parents[2]


def test_seeds_parse_as_numbers_and_inclusive_ranges_each_once():
    s = script_module("fidelity_seeds")
    assert s.parse_seeds("1,2,5-8") == [1, 2, 5, 6, 7, 8]
    assert s.parse_seeds("3, 1-3") == [3, 1, 2]


@pytest.mark.parametrize("bad", ["1,x", "5-2", "1-", ""])
def test_a_bad_seed_is_refused_naming_the_option(bad):
    s = script_module("fidelity_seeds")
    with pytest.raises(ValueError, match="--scenario-seeds f07"):
        s.parse_seeds(bad, "--scenario-seeds f07")


def test_a_scenario_with_its_own_seeds_and_the_others_on_the_suites():
    s = script_module("fidelity_seeds")
    plan = s.SeedPlan.of_args("1-3", ["f07-four-bbr-shallow=1-5,9"])
    assert plan.of(Path("x/f07-four-bbr-shallow.toml")) == [1, 2, 3, 4, 5, 9]
    assert plan.of(Path("x/f01-single-bbr.toml")) == [1, 2, 3]
    specs = [Path("f01-single-bbr.toml"), Path("f07-four-bbr-shallow.toml")]
    assert plan.describe(specs) == (
        "seeds 1-3 (f07-four-bbr-shallow on seeds 1-5, 9, to decide rows the suite's "
        "seeds left undecided)"
    )
    assert plan.argv() == " --scenario-seeds f07-four-bbr-shallow=1-5,9"  # one shell word
    assert plan.unknown([Path("f01-single-bbr.toml")]) == ["f07-four-bbr-shallow"]


def test_a_scenario_seeds_argument_without_a_name_is_refused():
    s = script_module("fidelity_seeds")
    with pytest.raises(ValueError, match="SCENARIO=SEEDS"):
        s.SeedPlan.of_args("1", ["1-50"])


def test_compact_writes_runs_of_three_or_more_as_ranges():
    s = script_module("fidelity_seeds")
    assert s.compact([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == "1-10"
    assert s.compact([1, 2, 4, 5, 6, 9]) == "1, 2, 4-6, 9"
    assert s.parse_seeds(s.compact([1, 2, 4, 5, 6, 9], ",")) == [1, 2, 4, 5, 6, 9]


def test_the_suite_runs_a_scenario_on_its_own_seeds(tmp_path):
    f = script_module("fidelity")
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        '[experiment]\nname = "tiny"\nduration = "0.2s"\n'
        '[bottleneck]\nrate = "10Mbps"\n[[flows]]\ncc = "cubic"\nrtt = "20ms"\n'
    )
    plan = script_module("fidelity_seeds").SeedPlan((1,), {"tiny": (2, 3)})
    f.run_all([spec], tmp_path / "out", plan, lambda _: None, backends=("sim",), hz="250")
    assert sorted(p.name for p in (tmp_path / "out" / "tiny").iterdir()) == [
        "sim-seed2",
        "sim-seed3",
    ]


def test_an_unknown_scenario_is_refused_before_any_run(tmp_path):
    spec = REPO / "experiments" / "fidelity" / "f01-single-bbr.toml"
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "fidelity.py"), str(spec), "-o", str(tmp_path)]
        + ["--backends", "sim", "--scenario-seeds", "f99-nothing=1-3"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "--scenario-seeds: no spec named f99-nothing" in r.stderr
    assert not any(tmp_path.iterdir())
