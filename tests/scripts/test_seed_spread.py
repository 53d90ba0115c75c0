"""scripts/seed_spread.py: the gap between two sets of runs with Welch's 95 % interval,
and its verdict against the fidelity goals (numbers computed by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_module import script_module


def _spread():
    return script_module("seed_spread")


def test_welch_interval_by_hand():
    # sim 1, 2, 3 and kernel 2, 3, 4: difference 1, each variance 1, so the standard
    # error is sqrt(1/3 + 1/3) = 0.8165 at (2/3)^2 / (2 * (1/3)^2 / 2) = 4 degrees of
    # freedom; t(0.975, 4) = 2.7764, half-width 2.2670.
    lo, hi = _spread().welch_interval([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert lo == pytest.approx(1 - 2.2670, abs=1e-4)
    assert hi == pytest.approx(1 + 2.2670, abs=1e-4)


def test_verdict_needs_the_whole_interval():
    v = _spread().verdict
    assert v(-0.02, 0.04, -0.05, 0.05) == "met"
    assert v(0.06, 0.09, -0.05, 0.05) == "outside"
    assert v(-0.09, -0.06, -0.05, 0.05) == "outside"
    assert v(0.01, 0.08, -0.05, 0.05) == "undecided"


def _run(tmp: Path, name: str, backlog: float, share: float) -> None:
    d = tmp / name
    d.mkdir()
    flows = [{"cc": "bbr", "share": share}, {"cc": "cubic", "share": 1 - share}]
    doc = {"aggregate": {"mean_backlog_pkts": backlog}, "flows": flows}
    (d / "summary.json").write_text(json.dumps(doc))


def test_table_rows_from_runs(tmp_path, capsys):
    # Backlog: sim 20, 21, 22 (mean 21), kernel 25, 26, 27 (mean 26): +23.8 %, and the
    # interval (+5 +- 2.267 over 21: +13.0 % to +34.6 %) lies beyond the 5 % goal.
    # Shares: 0.50, 0.51, 0.52 against 0.51 x3: gap 0.000, interval +-t(0.975, 2) x
    # 0.01/sqrt(3) = +-0.025, inside 0.05.
    for k, (b, s) in enumerate([(20, 0.50), (21, 0.51), (22, 0.52)]):
        _run(tmp_path, f"sim{k}", b, s)
    for k in range(3):
        _run(tmp_path, f"kern{k}", 25 + k, 0.51)
    mod = _spread()
    assert mod.main(["--sim", str(tmp_path / "sim*/summary.json"),
                     "--kernel", str(tmp_path / "kern*/summary.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    backlog = next(r for r in out if r.startswith("| mean_backlog_pkts"))
    assert "+23.8%" in backlog and "[+13.0%, +34.6%]" in backlog and backlog.endswith("outside |")
    share = next(r for r in out if r.startswith("| flow 0 (bbr) share"))
    assert "[-0.025, +0.025]" in share and share.endswith("met |")


def test_a_pattern_without_runs_is_an_error(tmp_path):
    with pytest.raises(SystemExit, match="no summary.json matches"):
        _spread().main(["--sim", str(tmp_path / "none*/summary.json"), "--kernel", "x"])


def test_a_run_two_patterns_match_counts_once(tmp_path, capsys):
    # Before: load() concatenated each pattern's matches, so a run that two globs (here
    # "sim*" and "sim0") both matched was counted twice, its seed weighted double and the
    # run count, hence the interval, wrong. Each run directory now counts once, also when
    # reached through a symbolic link.
    for k, b in enumerate([20, 21, 22]):
        _run(tmp_path, f"sim{k}", b, 0.5)
    (tmp_path / "alias").symlink_to(tmp_path / "sim1")
    for k in range(3):
        _run(tmp_path, f"kern{k}", 25 + k, 0.5)
    mod = _spread()
    runs = mod.load([str(tmp_path / "sim*/summary.json"), str(tmp_path / "sim0/summary.json"),
                     str(tmp_path / "alias/summary.json")])  # fmt: skip
    assert sorted(r["aggregate"]["mean_backlog_pkts"] for r in runs) == [20, 21, 22]
    assert mod.main(["--sim", str(tmp_path / "sim*/summary.json"), str(tmp_path / "sim*/summary.json"),
                     "--kernel", str(tmp_path / "kern*/summary.json")]) == 0  # fmt: skip
    backlog = next(
        r for r in capsys.readouterr().out.splitlines() if r.startswith("| mean_backlog_pkts")
    )
    assert "(3)" in backlog and "(6)" not in backlog


def test_a_run_in_both_sets_is_an_error(tmp_path):
    for k in range(2):
        _run(tmp_path, f"run{k}", 20 + k, 0.5)
    with pytest.raises(SystemExit, match="matches both --sim and --kernel"):
        _spread().main(["--sim", str(tmp_path / "run*/summary.json"),
                        "--kernel", str(tmp_path / "run1/summary.json")])  # fmt: skip
