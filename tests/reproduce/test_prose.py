"""Numbers in explanations filled from the runs (reproduce/prose.py): hand-made
runs with hand-computed means and intervals, the control's and another entry's runs, the
refusals on load, and a real reproduce whose report carries the filled number."""

import pytest
from tcplab.errors import SpecError
from tcplab.reproduce import load_catalogue
from tcplab.reproduce.catalogue import Claim, Entry, Meta
from tcplab.reproduce.prose import TemplateError, parse, render
from tcplab.reproduce.runner import ClaimResult, EntryResult, Run, fill_prose


def _run(cc: str, seed: int, share: float, rate: float = 5e6) -> Run:
    summary = {
        "flows": [{"share": share, "goodput_bps": rate}],
        "aggregate": {"utilization": 0.9},
    }
    return Run({"flows[*].cc": cc}, seed, f"{cc}{seed}", summary)


def _entry(name: str, claims: list[Claim]) -> Entry:
    meta = Meta(paper="tum", figure="Fig. 1", title="t", claims=claims)
    return Entry(name, None, meta, {"sweep": {"flows[*].cc": ["bbr", "cubic"]}})  # type: ignore[arg-type]


CLAIM = Claim(quote="q", where="w", metric="share[flow0]", op=">", value=0.5)


@pytest.fixture
def res():
    """bbr: shares 0.40 and 0.46 over two seeds (mean 0.43); cubic: 0.70 alone."""
    r = EntryResult(_entry("tum-a", [CLAIM]))
    r.runs = [_run("bbr", 1, 0.40, 4e6), _run("bbr", 2, 0.46, 6e6), _run("cubic", 1, 0.70)]
    c = ClaimResult(r.entry, CLAIM, "disagree", ours=0.43, ci=0.381, point={"flows[*].cc": "bbr"})
    r.claims = [c]
    return r


def test_a_metric_at_a_point_is_the_mean_over_its_seeds(res):
    c = res.claims[0]
    text = "bbr {{ share[flow0] }}, cubic {{share[flow0] @ flows[*].cc = cubic}}"
    assert render(text, c, res, {}) == "bbr 0.43, cubic 0.7"


def test_options_spread_scale_and_format(res):
    c = res.claims[0]
    # stdev(0.40, 0.46) = 0.042426; t(0.975, 1) = 12.706; half-width 12.706 x 0.042426 / sqrt 2
    # = 0.381
    assert render("{{share[flow0] | ± .2f}}", c, res, {}) == "0.43 ± 0.38"
    # goodput 4 and 6 Mbit/s: mean 5, half-width 12.706 x 1.4142 / 1.4142 = 12.7
    assert render("{{goodput_bps[flow0] | /1e6 ± .1f}}", c, res, {}) == "5.0 ± 12.7"
    assert render("{{share[flow0] | x100 .0f}} %", c, res, {}) == "43 %"
    assert render("{{ours}} / {{ci | .3f}}", c, res, {}) == "0.43 / 0.381"


def test_control_and_other_entries_read_their_own_runs(res):
    c = res.claims[0]
    c.control = ClaimResult(res.entry, CLAIM, "agree", ours=0.52, ci=0.01)
    c.control_runs = [_run("bbr", 1, 0.50), _run("bbr", 2, 0.54)]
    other = EntryResult(_entry("tum-b", []))
    other.runs = [_run("cubic", 1, 0.25), _run("cubic", 2, 0.35)]
    text = "{{control: ours}} {{control: share[flow0]}} {{tum-b: share[flow0] @ flows[*].cc=cubic}}"
    assert render(text, c, res, {"tum-b": other}) == "0.52 0.52 0.3"
    assert render("{{tum-b: share[flow0] @ flows[*].cc=cubic}}", c, res, {}) == (
        "(not run here: tum-b)"
    )


def test_an_undefined_value_says_so(res):
    res.runs[1].summary["flows"][0]["share"] = float("nan")
    assert render("{{share[flow0]}}", res.claims[0], res, {}) == "undefined"


def test_fill_prose_sets_the_texts_the_report_prints(res):
    claim = CLAIM.model_copy(update={"explain": "at {{share[flow0]}}", "open": "{{ours}} tried"})
    res.claims[0].claim = claim
    fill_prose([res])
    assert (res.claims[0].explain_text, res.claims[0].open_text) == ("at 0.43", "0.43 tried")


@pytest.mark.parametrize(
    "text, says",
    [
        (
            "{{ shar e }}",
            "neither one of the claim's row .ours, ci, n, holding, target. nor a metric",
        ),
        ("{{ ours @ a=b }}", "drop '@'"),
        ("{{ share @ nonsense }}", "is not 'path = value'"),
        ("{{ share | %% }}", "option '%%' unknown"),
        ("{{ share ", "unbalanced"),
    ],
)
def test_bad_templates_are_refused_with_what_is_allowed(text, says):
    with pytest.raises(TemplateError, match=says):
        parse(text)


ENTRY = """
[experiment]
duration = "1s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
"flows[*].cc" = ["bbr", "cubic"]
"bottleneck.buffer" = ["1bdp", "2bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 98"
title = "prose"

[[catalogue.claims]]
quote = "q"
where = "w"
metric = "utilization"
op = ">="
value = 0.5
at = { "flows[*].cc" = "bbr" }
explain = "EXPLAIN"
"""


@pytest.mark.parametrize(
    "explain, says",
    [
        ("{{utilization @ flows[*].cc = reno}}", "flows[*].cc = reno is not in the grid"),
        ("{{utilization @ bottleneck.rate = 1}}", "'bottleneck.rate' is not swept"),
        ("{{utilization}}", "leaves bottleneck.buffer open"),
        ("{{control: utilization @ bottleneck.buffer = 1bdp}}", "needs the claim's control"),
        ("{{tum-nope: utilization}}", "no catalogue entry named 'tum-nope'"),
        ("{{utilization | .2q}}", "option '.2q' unknown"),
    ],
)
def test_an_entry_with_a_bad_template_does_not_load(tmp_path, explain, says):
    root = tmp_path / "papers" / "tum"
    root.mkdir(parents=True)
    (root / "tum-fig98-prose.toml").write_text(ENTRY.replace("EXPLAIN", explain))
    with pytest.raises(SpecError) as err:
        load_catalogue(tmp_path / "papers")
    assert says in str(err.value) and "claims[0].explain" in str(err.value)


def test_a_reproduce_report_prints_the_filled_number(reproduce_entry):
    """The report's explanation carries the same mean the claims table computed."""
    text = ENTRY.replace("EXPLAIN", "ours {{utilization @ bottleneck.buffer = 1bdp | .4f}}")
    text = text.replace(
        'at = { "flows[*].cc" = "bbr" }',
        'at = { "flows[*].cc" = "bbr", "bottleneck.buffer" = "1bdp" }',
    )
    out, rows = reproduce_entry("tum-fig98-prose.toml", text)
    row = rows["q"]
    assert row["explanation"] == f"ours {float(row['mean']):.4f}"
    md = (out / "report.md").read_text()
    assert row["explanation"] in md and "{{" not in md


def test_a_claim_without_a_reported_point_never_blends_the_grid(res):
    """A claim that did not run reports no point; its template must not average bbr's
    and cubic's runs (0.52) but say it has no value."""
    c = ClaimResult(res.entry, CLAIM, "not run")
    assert render("{{share[flow0]}}", c, res, {}) == "undefined"
    # its own `at`, where it names one value, still fixes the point
    at_bbr = CLAIM.model_copy(update={"at": {"flows[*].cc": "bbr"}})
    assert render("{{share[flow0]}}", ClaimResult(res.entry, at_bbr, "not run"), res, {}) == "0.43"
