"""A weaker form is the paper's direction (catalogue.weaker_problems): the loader refuses
one that is a looser level, a wider band, or a factor that also accepts the opposite
order; and a control that claims to set the paper's condition must give its evidence."""

import pytest
from tcplab.errors import SpecError
from tcplab.reproduce.catalogue import Claim, load_entry, weaker_problems


def _claim(**kw):
    base = {"quote": "q", "where": "w", "metric": "m", "op": ">=", "value": 0.42}
    return Claim(**{**base, **kw})


@pytest.mark.parametrize(
    "claim, field, says",
    [
        # acd-table1 #1: "42 % loss" with ">= 0.10": a looser level, and no no-effect point
        (
            _claim(op="within", tolerance=0.05, weaker={"op": ">=", "value": 0.1}),
            "weaker.op",
            "looser level",
        ),
        (
            _claim(op="within", tolerance=0.05, weaker={"op": ">", "value": 0.1}),
            "weaker.neutral",
            "no-effect point",
        ),
        # acd-table3 #2: ">= 0.99 x" the reference accepts ours below it
        (
            _claim(of="g", value=1.0, weaker={"op": ">=", "value": 0.99}),
            "weaker.value",
            "opposite order",
        ),
        (_claim(of="g", value=1.0, weaker={"op": ">=", "value": 1.0}), "weaker.op", "'>' 1"),
        # a wider band is not a direction (acw-fig09 #1)
        (
            _claim(op="within", value=2992, weaker={"op": "within", "value": 2992}),
            "weaker.op",
            "wider band",
        ),
        # a direction against the main check's
        (
            _claim(op="<=", value=0.5, weaker={"op": ">", "value": 0.0, "neutral": "none"}),
            "weaker.op",
            "points against",
        ),
        # for 'within' the paper's value fixes the side: 0.095 is below the fair share
        (
            _claim(op="within", value=0.095, weaker={"op": ">", "value": 0.5, "neutral": "h"}),
            "weaker.op",
            "its direction is '<'",
        ),
        # cws-fig09-12 #4: "fair" (Jain >= 0.9) with "better than BBR": another comparison
        (
            _claim(value=0.9, weaker={"op": ">", "value": 1.0, "of": "j", "of_at": {}}),
            "weaker.neutral",
            "another comparison",
        ),
    ],
)
def test_a_weaker_form_that_is_not_the_papers_direction_is_refused(claim, field, says):
    problems = weaker_problems(claim)
    assert any(f == field and says in m for f, m in problems), problems


@pytest.mark.parametrize(
    "claim",
    [
        _claim(op="within", value=0.095, weaker={"op": "<", "value": 0.5, "neutral": "fair"}),
        _claim(of="g", value=1.05, weaker={"op": ">", "value": 1.0}),
        _claim(of="g", op="<=", value=0.25, weaker={"op": "<", "value": 1.0}),
        _claim(of="g", value=3.0, weaker={"op": ">=", "value": 2.0}),  # beyond 1: a level
        # of the reference, on the paper's side: allowed
        _claim(value=0.94, weaker={"op": ">", "value": 1.0, "of": "j", "neutral": "BBR's"}),
    ],
)
def test_a_direction_is_accepted(claim):
    assert weaker_problems(claim) == []


ENTRY = """
[experiment]
duration = "2s"
[bottleneck]
rate = "10Mbps"
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
"bottleneck.buffer" = ["1bdp"]

[catalogue]
paper = "tum"
figure = "Fig. 1"
title = "t"

[[catalogue.claims]]
quote = "q"
where = "w"
metric = "utilization"
op = ">="
value = 0.9
CONTROL
"""


@pytest.mark.parametrize(
    "control, field",
    [
        ('control = { set = { "tcp.rto_min" = "1s" }, cause = "c" }', "control.kind"),
        (
            'control = { set = { "tcp.rto_min" = "1s" }, cause = "c", kind = "condition" }',
            "control.evidence",
        ),
        ('weaker = { op = ">=", value = 0.5 }', "claims[0].weaker.op"),
    ],
)
def test_the_loader_names_the_field(tmp_path, control, field):
    path = tmp_path / "tum-fig01.toml"
    path.write_text(ENTRY.replace("CONTROL", control))
    with pytest.raises(SpecError, match=field.replace(".", r"\.").replace("[", r"\[")):
        load_entry(path)


def test_a_condition_with_evidence_and_a_diagnostic_load(tmp_path):
    path = tmp_path / "tum-fig01.toml"
    for control in (
        'control = { set = { "tcp.rto_min" = "1s" }, cause = "c", kind = "diagnostic" }',
        'control = { set = { "tcp.rto_min" = "1s" }, cause = "c", kind = "condition", '
        'evidence = "ns-3 of the time" }',
    ):
        path.write_text(ENTRY.replace("CONTROL", control))
        assert load_entry(path).meta.claims[0].control is not None


def test_a_claims_link_points_at_its_quote_not_a_comment_quoting_it(tmp_path):
    # tum-fig10c's header comment quotes its first claim's sentence: the report's link
    # must go to the claim (line 4), not to the comment (line 1)
    from tcplab.reproduce.report import _link

    path = tmp_path / "papers" / "tum" / "tum-fig01.toml"
    path.parent.mkdir(parents=True)
    path.write_text(
        '# "For small RTTs BBR suppresses CUBIC" says the paper\n\n[[catalogue.claims]]\n'
        'quote = "For small RTTs BBR suppresses CUBIC"\n'
    )
    assert _link(path, _claim(quote="For small RTTs BBR suppresses CUBIC")).endswith("#L4")
