"""Labels no reader can misread (issue 43): each rule on a hand-built claim row or on
hand-made runs whose means and intervals are computed by hand in the comments.

- a decided miss of the main check is a miss, whatever the weaker form says;
- "direction only" stands only within thresholds.EFFECT_BAND (0.5x-2x) of the paper's effect;
- a weaker form keeps the main check's reference (refused on load otherwise);
- a check that cannot see the claim is "untestable with this metric", counted apart;
- a "reproduced" that plain BBR passes too says it does not tell the algorithms apart;
- a label on fewer seeds than the paper used says so and is counted apart;
- explanations take their row's numbers (n, seeds holding) from the row.
"""

import math
from types import SimpleNamespace

import pytest
from tcplab.errors import SpecError
from tcplab.reproduce.catalogue import Claim, load_entry, weaker_problems
from tcplab.reproduce.judge import judge
from tcplab.reproduce.report import FEWER_SEEDS, counts, headline_word, seed_line
from tcplab.reproduce.runner import ClaimResult, Run, evaluate_claim, label


def _entry(paper="acw", diagnostic=""):
    meta = SimpleNamespace(paper=paper, diagnostic=diagnostic, max_seeds=None, max_seeds_why="")
    return SimpleNamespace(name=f"{paper}-fig01", meta=meta, raw={"sweep": {"repeat": 3}})


def _claim(**kw):
    base = {"quote": "q", "where": "w", "metric": "utilization", "op": ">=", "value": 0.9}
    return Claim(**{**base, **kw})


def _run(cc, seed, util):
    return Run({"cc": cc}, seed, f"{cc}{seed}", {"aggregate": {"utilization": util}})


# --- the label from the main check, the weaker form and the effect ------------------


@pytest.mark.parametrize(
    ("main", "weaker", "effect", "want"),
    [
        ("holds", "", math.nan, "agree"),
        ("inconclusive", "holds", 1.0, "inconclusive"),  # more seeds come first
        # acw-fig06 #5: 0/10 seeds, 0.091 against 0.225, weaker undecided: a miss
        ("fails", "inconclusive", math.nan, "disagree"),
        ("fails", "", math.nan, "disagree"),
        ("fails", "fails", 0.3, "disagree"),
        ("fails", "holds", 0.73, "partly"),
        ("fails", "holds", 0.5, "partly"),  # the band's edges belong to it
        ("fails", "holds", 2.0, "partly"),
        # acw-fig10 #5 (0.096x) and acw-fig07 #8 (0.073x): a direction far below the paper's
        ("fails", "holds", 0.096, "disagree"),
        ("fails", "holds", 0.49, "disagree"),
        ("fails", "holds", 2.38, "disagree"),  # acw-fig09 #2: beyond twice the paper's
        # a looser band around the same value (no no-effect point): no effect to bound
        ("fails", "holds", math.nan, "partly"),
        ("undefined", "holds", 1.0, "not run"),
    ],
)
def test_the_label_of_a_main_check_and_its_weaker_form(main, weaker, effect, want):
    assert label(main, weaker, effect) == want


def test_a_decided_miss_with_an_undecided_weaker_form_is_a_miss():
    """Main: utilization >= 0.9 on 0.70, 0.71, 0.72 (mean 0.71, interval 0.71 +- 0.0248,
    t(2) = 4.303 x 0.01 / sqrt 3): entirely below 0.9 - 0.01, fails. Weaker: > 1 x BBR's
    0.70, 0.73, 0.69 seed by seed: margins 0, -0.02, 0.03 (mean 0.0033, interval
    +- 0.0624) straddle +theta = 0.01: undecided. The label: disagree, not inconclusive."""
    runs = [_run("acw", s, u) for s, u in ((1, 0.70), (2, 0.71), (3, 0.72))]
    runs += [_run("bbr", s, u) for s, u in ((1, 0.70), (2, 0.73), (3, 0.69))]
    claim = _claim(
        at={"cc": "acw"},
        weaker={
            "op": ">",
            "value": 1.0,
            "of": "utilization",
            "of_at": {"cc": "bbr"},
            "neutral": "BBR",
        },
    )
    r = evaluate_claim(_entry("cws"), claim, runs)
    assert (r.main, r.direction, r.verdict) == ("fails", "inconclusive", "disagree")
    assert r.reason == ""


def test_a_direction_at_a_tenth_of_the_papers_effect_is_not_reproduced_with_its_factor():
    """The paper: 0.5 x BBR's. Ours 0.779, 0.778, 0.777 (mean 0.778), BBR 0.799, 0.798,
    0.797 (mean 0.798, target 0.399): the main check (within 0.05 of 0.5 x) fails, the
    direction (< 1 x BBR) holds; effect (0.778 - 0.798) / (0.399 - 0.798) = 0.0501x:
    not reproduced, the factor in the headline."""
    runs = [_run("acw", s, 0.78 - 0.001 * s) for s in (1, 2, 3)]
    runs += [_run("bbr", s, 0.80 - 0.001 * s) for s in (1, 2, 3)]
    claim = _claim(
        op="within",
        value=0.5,
        tolerance=0.05,
        of="utilization",
        of_at={"cc": "bbr"},
        at={"cc": "acw"},
        headline=True,
        weaker={"op": "<", "value": 1.0},
    )
    r = evaluate_claim(_entry("cws"), claim, runs)
    assert (r.main, r.direction, r.verdict) == ("fails", "holds", "disagree")
    assert r.effect == pytest.approx(0.02 / 0.399)
    assert headline_word(r).startswith("not reproduced (effect 0.05x the paper's)")
    assert "effect 0.05" in r.ours_text()


# --- weaker forms: the same comparison, looser ---------------------------------------


def test_a_weaker_form_against_another_reference_is_refused():
    # acw-fig06 #5: the sentence compares with DA-BBR, its weaker form compared with BBR
    c = _claim(
        op=">",
        value=1.0,
        of="share[flow0]",
        of_at={"cc": "da-bbr"},
        weaker={"op": ">", "value": 1.0, "of_at": {"cc": "bbr"}},
    )
    assert [f for f, _ in weaker_problems(c)] == ["weaker.of_at"]
    c = _claim(
        op=">", value=1.0, of="share[flow0]", weaker={"op": ">", "value": 1.0, "of": "share[flow1]"}
    )
    assert [f for f, _ in weaker_problems(c)] == ["weaker.of"]


def test_a_wider_band_around_the_same_value_is_a_weaker_form():
    # acw-fig10 #1: about 35 ms within 3.5; weaker: within 7 of the same 35 ms
    c = _claim(
        op="within", value=35, tolerance=3.5, weaker={"op": "within", "value": 35, "tolerance": 7.0}
    )
    assert weaker_problems(c) == []
    for w in (
        {"op": "within", "value": 30, "tolerance": 7.0},  # another value
        {"op": "within", "value": 35, "tolerance": 3.5},
    ):  # not looser
        assert [
            f for f, _ in weaker_problems(_claim(op="within", value=35, tolerance=3.5, weaker=w))
        ] == ["weaker.op"]


def test_a_wider_band_holds_where_the_main_band_fails():
    """acw-fig10 #1's shape: 41.7 +- small against 35 within 3.5 fails; within 7 of 35
    holds (41.6, 41.7, 41.8: the interval 41.7 +- 0.25 lies inside 28-42): partly, with no
    effect ratio (a band has no no-effect point)."""
    runs = [
        Run({"cc": "bbr"}, s, str(s), {"aggregate": {"mean_rtt_ms": v}})
        for s, v in ((1, 41.6), (2, 41.7), (3, 41.8))
    ]
    claim = _claim(
        metric="mean_rtt_ms",
        op="within",
        value=35,
        tolerance=3.5,
        at={"cc": "bbr"},
        weaker={"op": "within", "value": 35, "tolerance": 7.0},
    )
    r = evaluate_claim(_entry("cws"), claim, runs)
    assert (r.main, r.direction, r.verdict) == ("fails", "holds", "partly")
    assert math.isnan(r.effect)


# --- untestable, baseline, seeds -------------------------------------------------------


def test_a_check_that_cannot_see_the_claim_is_untestable_and_counted_apart():
    """bbrprime-fig08 #2: 0.9363 against CUBIC's 0.9369 ("slightly earlier"), inside the
    0.01 band of a utilisation, which is larger than the paper's own effect."""
    runs = [_run("bbr", s, 0.9363 + 1e-5 * s) for s in (1, 2, 3)]
    runs += [_run("cubic", s, 0.9369 + 1e-5 * s) for s in (1, 2, 3)]
    claim = _claim(
        op=">",
        value=1.0,
        of="utilization",
        of_at={"cc": "cubic"},
        at={"cc": "bbr"},
        untestable="below the band",
    )
    r = evaluate_claim(_entry("bbrprime"), claim, runs)
    assert r.main == "fails"  # the judge alone would call it a disagreement
    assert (r.verdict, r.label) == ("untestable", "untestable with this metric")
    res = SimpleNamespace(entry=_entry("bbrprime"), claims=[r])
    assert counts([res]) == {"bbrprime": {"untestable": 1}}


def test_a_claim_plain_bbr_also_passes_says_it_does_not_tell_them_apart():
    """acw-fig04 #6: BBR-ACW 0.931, 0.930, 0.929 >= 0.856, and BBR 0.932, 0.931, 0.930
    passes the same check: the headline says so, with BBR's mean 0.931."""
    runs = [_run("acw", s, 0.932 - 0.001 * s) for s in (1, 2, 3)]
    runs += [_run("bbr", s, 0.933 - 0.001 * s) for s in (1, 2, 3)]
    claim = _claim(value=0.856, at={"cc": "acw"}, baseline={"cc": "bbr"}, headline=True)
    r = evaluate_claim(_entry("cws"), claim, runs)
    assert r.verdict == "agree" and r.baseline.verdict == "agree"
    assert r.baseline.ours == pytest.approx(0.931)
    word = headline_word(r)
    assert word.startswith("reproduced, but it does not tell the algorithms apart")
    assert "cc = bbr" in word and "0.931" in word
    # a baseline that fails leaves "reproduced" alone
    runs_low = runs[:3] + [_run("bbr", s, 0.80 - 0.001 * s) for s in (1, 2, 3)]
    assert headline_word(evaluate_claim(_entry("cws"), claim, runs_low)) == "reproduced"


def test_a_label_on_fewer_seeds_than_the_papers_says_so_and_is_counted_apart():
    """ACW states 10 repetitions: an agreement over 3 seeds reads "agree (3 of the
    paper's 10 seeds)" and counts under FEWER_SEEDS; at 10 seeds it is an agreement;
    CWS states no count, so its 3 seeds are not short of anything."""
    claim = _claim()
    short = ClaimResult(_entry("acw"), claim, "agree", seeds=3, paper_seeds=10)
    full = ClaimResult(_entry("acw"), _claim(quote="q2"), "agree", seeds=10, paper_seeds=10)
    cws = ClaimResult(_entry("cws"), claim, "agree", seeds=3, paper_seeds=0)
    assert short.label == "agree (3 of the paper's 10 seeds)"
    assert headline_word(short) == "reproduced (3 of the paper's 10 seeds)"
    assert (full.label, cws.label) == ("agree", "agree")
    tallies = counts(
        [
            SimpleNamespace(entry=_entry("acw"), claims=[short, full]),
            SimpleNamespace(entry=_entry("cws"), claims=[cws]),
        ]
    )
    assert tallies == {"acw": {FEWER_SEEDS: 1, "agree": 1}, "cws": {"agree": 1}}


def test_seed_counts_come_from_the_paper_and_the_runs():
    runs = [_run("acw", s, v) for s, v in ((1, 0.95), (2, 0.96), (3, 0.94))]
    r = evaluate_claim(_entry("acw"), _claim(at={"cc": "acw"}), runs)
    assert (r.seeds, r.paper_seeds, r.short_of_paper) == (3, 10, True)
    assert evaluate_claim(_entry("tum"), _claim(at={"cc": "acw"}), runs).paper_seeds == 5
    # Seeds that all give one value (runs that draw no randomness): more would repeat it,
    # so the label does not say it rests on fewer seeds.
    same = [_run("acw", s, 0.95) for s in (1, 2, 3)]
    r = evaluate_claim(_entry("acw"), _claim(at={"cc": "acw"}), same)
    assert (r.reason, r.short_of_paper) == ("identical", False)


def test_the_report_says_per_entry_how_many_seeds_and_why(tmp_path):
    entry = _entry("acw")
    entry.meta.max_seeds, entry.meta.max_seeds_why = 3, "runs of 300 s"
    r = ClaimResult(entry, _claim(), "agree", seeds=3, paper_seeds=10)
    res = SimpleNamespace(entry=entry, claims=[r], more_seeds=3, seed_cap=3)
    line = seed_line(res)
    assert line.startswith("seeds: 3 per point, raised to 3")
    assert "the paper's 10" in line and "capped at 3 by the entry" in line
    assert "runs of 300 s" in line and "1 label on fewer seeds" in line


def test_an_entry_that_caps_its_seeds_must_say_why(tmp_path):
    path = tmp_path / "acw-fig01.toml"
    path.write_text(
        '[experiment]\nduration = "2s"\n[bottleneck]\nrate = "10Mbps"\n'
        '[[flows]]\ncc = "bbr"\nrtt = "40ms"\n'
        '[catalogue]\npaper = "acw"\nfigure = "F"\ntitle = "t"\nmax_seeds = 3\n'
    )
    with pytest.raises(SpecError, match=r"catalogue\.max_seeds_why"):
        load_entry(path)


# --- "at least" and point claims ----------------------------------------------------


def test_at_least_holds_while_the_interval_stays_above_minus_theta():
    """tum-fig10a #2: F_tp >= 0.95 with theta 0.01. 0.948, 0.950, 0.952: mean 0.95,
    interval +- 4.303 x 0.002 / sqrt 3 = +- 0.00497, low end -0.005 >= -0.01: holds.
    0.930, 0.950, 0.970: +- 0.0497, low end -0.0497 < -0.01 < high end: undecided."""
    assert (
        judge(">=", [0.948, 0.950, 0.952], [0.95] * 3, threshold=0.01, runs_differ=True).outcome
        == "holds"
    )
    assert (
        judge(">=", [0.930, 0.950, 0.970], [0.95] * 3, threshold=0.01, runs_differ=True).outcome
        == "inconclusive"
    )
    # a point claim is two-sided: 96 % fewer is 0.04 x within 0.02, so 0.0 x (100 %
    # fewer), which a one-sided '<= 0.06 x' took, fails: ratios 0.001, 0.002, 0.003
    assert (
        judge("within", [0.001, 0.002, 0.003], [0.04] * 3, tolerance=0.02, runs_differ=True).outcome
        == "fails"
    )


# --- explanations take their numbers from the row -------------------------------------


def test_an_explanation_states_its_rows_seeds_from_the_row():
    from tcplab.reproduce.prose import render

    claim = _claim(explain="{{n}} seeds, the check holds in {{holding}}; {{ours | ± .1f}}")
    r = ClaimResult(
        _entry("bbrprime"), claim, "inconclusive", ours=53.3, seeds=10, seeds_holding=8, ci=4.56
    )
    assert render(claim.explain, r, None, {}) == "10 seeds, the check holds in 8; 53.3 ± 4.6"


def test_the_shipped_explanations_state_no_seed_count_in_words():
    """The catalogue's explanations give their row's seeds through {{n}} / {{holding}}:
    "one seed" of a row with three (acw-fig09 #5) or "all three seeds" of one with ten
    (bbrprime-fig06 #2) cannot come back. Seeds looked at by hand in the series say so
    ("the first three seeds (examined by hand ...)")."""
    import re

    from tcplab.reproduce.catalogue import PACKAGED, load_catalogue

    # a count of seeds in words, unless it says which seeds were looked at by hand
    numbers = "one|two|three|four|five|six|seven|eight|nine|ten|all \\w+"
    words = re.compile(rf"\b({numbers}) seeds?\b(?! (run|examined|\(examined))", re.IGNORECASE)
    found = [
        (e.name, k, m.group(0))
        for e in load_catalogue(PACKAGED)
        for k, c in enumerate(e.meta.claims, 1)
        for m in words.finditer(c.explain)
    ]
    assert found == []
