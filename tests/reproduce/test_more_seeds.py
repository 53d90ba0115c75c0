"""More seeds for undecided claims (reproduce/seeds.py): the cap is the
paper's own repetition count, the seed count doubles, only the points the undecided
claims read get the extra runs, the entry's own runs are reused, and a claim the seeds
cannot decide is reported inconclusive at the cap with its n."""

from pathlib import Path

import pytest
from tcplab.reproduce.catalogue import PAPERS, Claim
from tcplab.reproduce.seeds import next_repeat, restricted, seed_cap


def test_the_cap_is_the_papers_repetition_count():
    # ACD Sec. 3.4: 30 simulations; ACW Sec. 5: 10 repetitions; TUM Sec. 4: five.
    assert (seed_cap("acd", None), seed_cap("acw", None), seed_cap("tum", None)) == (30, 10, 5)
    assert seed_cap("cws", None) == seed_cap("bbrprime", None) == 10  # not stated: ours
    assert seed_cap("acd", 8) == 8 and seed_cap("tum", 20) == 5  # an entry only lowers it


@pytest.mark.parametrize(
    ("repeat", "cap", "nxt"), [(1, 5, 2), (2, 5, 4), (4, 5, 5), (5, 5, None), (5, 30, 10)]
)
def test_seeds_double_up_to_the_cap(repeat, cap, nxt):
    assert next_repeat(repeat, cap) == nxt


def _claim(**kw):
    return Claim(quote="q", where="w", metric="share[reno]", op=">=", value=0.5, **kw)


def test_only_the_points_the_claims_read_get_seeds():
    raw = {"sweep": {"repeat": 2, "a": [1, 2, 3], "b": ["x", "y"], "c": [10, 20]}}
    sub = restricted(raw, [_claim(at={"a": 1, "c": 10}, of_at={"a": 3})], 4)
    # a: the claim's point and its reference's; b not named: all values; c as at.
    assert sub["sweep"] == {"repeat": 4, "a": [1, 3], "b": ["x", "y"], "c": [10]}
    # A list in `at` means every value; `across` keeps its axis whole.
    sub = restricted(raw, [_claim(at={"a": [2, 3], "c": 10}, across="c")], 4)
    assert sub["sweep"] == {"repeat": 4, "a": [2, 3], "b": ["x", "y"], "c": [10, 20]}
    assert raw["sweep"]["repeat"] == 2  # the entry's own spec is untouched
    # The weaker form's reference point is read too (BBR-ACD's "fewer than BBR": at
    # a = 2, its direction against a = 1).
    weaker = {"op": ">", "value": 1.0, "of": "share[reno]", "of_at": {"a": 1}}
    sub = restricted(raw, [_claim(at={"a": 2, "b": "x", "c": 10}, weaker=weaker)], 4)
    assert sub["sweep"] == {"repeat": 4, "a": [1, 2], "b": ["x"], "c": [10]}


# Two identical Reno flows: flow 0's share is near 0.5 by symmetry (four seeds give
# 0.511 +- 0.004 at 1 BDP), so "share within 0.006 of 0.505" sits on the band's edge and
# stays undecided up to the cap; "share >= 0.3" holds at any seed (judged on the
# extra seeds of its point too). At 2 BDP their utilisation is the same in every seed
# while the runs differ (RTT, backlog): a value the seeds agree on, decided, and raised to
# the cap all the same (every judged claim runs at the paper's count, here capped). The
# entry runs 2 seeds at each of two buffers, max_seeds = 4.
ENTRY = """
[experiment]
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
[[flows]]
cc = "reno"
rtt = "40ms"
count = 2
[sweep]
repeat = 2
"bottleneck.buffer" = ["1bdp", "2bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 98"
title = "seeds test"
max_seeds = 4
max_seeds_why = "a test: the cap below TUM's five"

[[catalogue.claims]]
quote = "undecided"
where = "here"
metric = "share[flow0]"
op = "within"
value = 0.505
tolerance = 0.006
at = { "bottleneck.buffer" = "1bdp" }

[[catalogue.claims]]
quote = "decided"
where = "here"
metric = "share[flow0]"
op = ">="
value = 0.3
at = { "bottleneck.buffer" = "1bdp" }

[[catalogue.claims]]
quote = "identical"
where = "here"
metric = "utilization"
op = ">="
value = 0.5
at = { "bottleneck.buffer" = "2bdp" }
"""


def test_an_undecided_claim_gets_seeds_up_to_the_cap(reproduce_entry):
    out, rows = reproduce_entry("tum-fig98-seeds.toml", ENTRY)
    assert rows["decided"]["verdict"] == "agree" and "n=4" in rows["decided"]["ours"]
    assert "n=4" in rows["undecided"]["ours"]  # raised from 2 to the cap, 4, and judged
    assert rows["undecided"]["verdict"] == "inconclusive"
    # The same utilisation in every seed of runs that differ (their RTTs and backlogs do):
    # a value the seeds agree on, decided; it is still raised to the paper's count (the
    # cap, 4) so that its label does not rest on fewer seeds. Runs that are copies of one
    # another stay undecided and get none (test_judge.py).
    assert rows["identical"]["verdict"] == "agree"
    assert "n=4" in rows["identical"]["ours"]
    entry = out / "tum" / "tum-fig98-seeds"
    more = sorted(p.name for p in (entry / "more-seeds" / "runs").iterdir())
    ours = sorted(p.name for p in (entry / "runs").iterdir())
    # The extra sweep holds both points at 4 seeds: 2 shared runs each (hard links) + 2 new.
    assert len(more) == 8 and len(set(more) & set(ours)) == 4
    shared = (set(more) & set(ours)).pop()
    a = entry / "runs" / shared / "summary.json"
    b = entry / "more-seeds" / "runs" / shared / "summary.json"
    assert a.stat().st_ino == b.stat().st_ino  # reused, not recomputed
    md = (out / "report.md").read_text()
    # the entry's line: its seeds, what undecided claims got, the paper's count and why
    assert "seeds: 2 per point, raised to 4 at the claims' points (cap 4" in md
    assert "the paper's 5; capped at 4 by the entry (`max_seeds`): a test" in md
    assert Path(out / "report.html").is_file()


# A control: the claim judged again with one unswept setting changed. BBR alone
# on a 10 Mbit/s link with 1 % random loss (so that seeds differ) keeps it busy
# (utilization >= 0.8 holds); with 30 % random loss it cannot (the verdict moves); a 1 s
# minimum RTO changes little (the verdict stays: that cause is ruled out). "idle"
# disagrees, and its control (the same loss, declared a condition the paper had) moves it
# to agree; "idle too" is the same with the control a diagnostic, which explains nothing.
CONTROLLED = """
[experiment]
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
loss = 0.01
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
repeat = 2
"bottleneck.buffer" = ["1bdp", "2bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 97"
title = "controls test"

[[catalogue.claims]]
quote = "busy"
where = "here"
metric = "utilization"
op = ">="
value = 0.8
at = { "bottleneck.buffer" = "1bdp" }
control = { set = { "bottleneck.loss" = 0.3 }, cause = "random loss", kind = "diagnostic" }

[[catalogue.claims]]
quote = "busy too"
where = "here"
metric = "utilization"
op = ">="
value = 0.8
at = { "bottleneck.buffer" = "2bdp" }
control = { set = { "tcp.rto_min" = "1s" }, cause = "the minimum RTO", kind = "diagnostic" }

[[catalogue.claims]]
quote = "idle"
where = "here"
metric = "utilization"
op = "<"
value = 0.8
at = { "bottleneck.buffer" = "1bdp" }
control = { set = { "bottleneck.loss" = 0.3 }, cause = "random loss", kind = "condition", evidence = "the paper's link lost 30 %" }

[[catalogue.claims]]
quote = "idle too"
where = "here"
metric = "utilization"
op = "<"
value = 0.8
at = { "bottleneck.buffer" = "1bdp" }
control = { set = { "bottleneck.loss" = 0.3 }, cause = "random loss", kind = "diagnostic" }
"""


def test_a_control_moves_the_verdict_or_rules_its_cause_out(reproduce_entry):
    out, rows = reproduce_entry("tum-fig97-controls.toml", CONTROLLED)
    assert rows["busy"]["verdict"] == "agree"
    assert rows["busy"]["control_verdict"] == "disagree"
    # a diagnostic shows what moves the number, never the paper's cause
    assert "Diagnostic, not the paper's condition" in rows["busy"]["control"]
    assert "not the paper's cause" in rows["busy"]["control"]
    assert rows["busy too"]["control_verdict"] == "agree"
    assert "does not move" in rows["busy too"]["control"]
    # The control's runs: the claim's point only, the entry's seeds.
    ctl = out / "tum" / "tum-fig97-controls" / "control-1" / "runs"
    assert len(list(ctl.iterdir())) == 2
    md = (out / "report.md").read_text()
    assert "bottleneck.loss = 0.3" in md
    # Only a condition the paper had explains a disagreement; the same control called a
    # diagnostic leaves it open, and the report never says it names the cause.
    assert rows["idle"]["verdict"] == "disagree"
    assert rows["idle"]["control_verdict"] == "agree"
    assert rows["idle"]["control_kind"] == "condition"
    assert "evidence: the paper's link lost 30 %" in rows["idle"]["control"]
    assert rows["idle too"]["control_verdict"] == "agree"
    assert "| explained: agrees under a condition the paper had (evidence given) |" in md
    assert "| open; a diagnostic (not the paper's condition) moves it to agree |" in md
    assert "the cause named there" not in md
    # the section lists every claim whose main check fails: both "idle" claims
    assert "2 claims of the papers fail their main check (2 disagree)" in md


def test_a_control_may_not_set_a_swept_path(tmp_path):
    from tcplab.errors import SpecError
    from tcplab.reproduce.catalogue import load_entry

    path = tmp_path / "tum-fig96.toml"
    path.write_text(CONTROLLED.replace('"bottleneck.loss" = 0.3', '"bottleneck.buffer" = "3bdp"'))
    with pytest.raises(SpecError, match=r"control\.set.*swept"):
        load_entry(path)


# A disagreement no single setting can test: the claim says what was tried
# (`open`), and the report lists it as open with that text, not as "no control yet".
OPEN = """
[experiment]
duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
loss = 0.01
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
repeat = 2
"bottleneck.buffer" = ["1bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 95"
title = "open test"

[[catalogue.claims]]
quote = "more than the link"
where = "here"
metric = "utilization"
op = ">="
value = 1.5
explain = "A link cannot be used 150 %."
open = "tried nothing: the paper's simulator counted differently"

[[catalogue.claims]]
quote = "also more than the link"
where = "here"
metric = "utilization"
op = ">="
value = 1.5
"""


def test_an_open_claim_is_listed_with_what_was_tried(reproduce_entry):
    out, rows = reproduce_entry("tum-fig95-open.toml", OPEN)
    assert rows["more than the link"]["verdict"] == "disagree"
    assert rows["more than the link"]["open"].startswith("tried nothing")
    md = (out / "report.md").read_text()
    assert (
        "2 claims of the papers fail their main check (2 disagree): 1 open, with what was "
        "tried: no single setting tests the cause, 1 open: no control experiment yet." in md
    )
    row = next(line for line in md.splitlines() if line.startswith("| [tum-fig95-open #1]"))
    # TUM used five seeds, the entry two: the claim was raised to five, so its label
    # stands on the paper's count and says nothing of seeds
    assert "| disagree | open, with what was tried: no single setting tests the cause |" in row
    assert "A link cannot be used 150 %. Open: tried nothing: the paper's simulator" in row
    # A one-entry report's contents link to its one paper's section, not to four absent ones.
    contents = next(line for line in md.splitlines() if line.startswith("Contents:"))
    assert contents.endswith("· [seeds and durations](#shortened) · [" + PAPERS["tum"] + "](#tum)")


def test_a_claim_has_a_control_or_says_why_none_fits_not_both(tmp_path):
    from tcplab.errors import SpecError
    from tcplab.reproduce.catalogue import load_entry

    path = tmp_path / "tum-fig94.toml"
    path.write_text(
        CONTROLLED.replace(
            'kind = "diagnostic" }', 'kind = "diagnostic" }\nopen = "nothing else fits"', 1
        )
    )
    with pytest.raises(SpecError, match=r"claims\[0\]\.open"):
        load_entry(path)


# A control under which the claim's number has no value (here a ratio of two zero
# retransmission counts: no random loss and a buffer nothing overflows): it decides
# nothing, so the report neither says the verdict moves nor that it stands.
NO_VALUE = """
[experiment]
duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
loss = 0.02
buffer = "unlimited"
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
repeat = 1
"flows[0].cc" = ["bbr", "cubic"]

[catalogue]
paper = "tum"
figure = "Fig. 93"
title = "no value under the control"

[[catalogue.claims]]
quote = "bbr retransmits a tenth of cubic"
where = "here"
metric = "retransmitted_packets"
op = "within"
value = 0.1
tolerance = 0.01
of = "retransmitted_packets"
of_at = { "flows[0].cc" = "cubic" }
at = { "flows[0].cc" = "bbr" }
control = { set = { "bottleneck.loss" = 0.0 }, cause = "no random loss", kind = "condition", evidence = "a lossless link" }
"""


def test_a_control_with_no_value_gives_no_verdict(reproduce_entry):
    out, rows = reproduce_entry("tum-fig93-novalue.toml", NO_VALUE)
    row = rows["bbr retransmits a tenth of cubic"]
    assert row["control_verdict"] == "not run"
    assert row["control"].endswith("the control gives no verdict.")
    assert "moves" not in row["control"] and "does not move" not in row["control"]
    md = (out / "report.md").read_text()
    assert "open: its control gave no value" in md
