"""Two prose-template bugs found converting the acw and acd catalogue (reproduce/prose.py):

* a claim's control's runs hold the claim's points and its reference's (``of_at``), so an
  axis a ``control:`` template leaves unnamed must default to the claim's point, as it does
  for the entry's own runs, and not average the reference's runs in
  (acw-fig04-utilisation-vs-loss #4);
* ``[sweep] metrics`` is a list but names the table's columns, not an axis; templates must
  not be asked to fix it (acd-table1, acd-table2 ...)."""

from tcplab.reproduce import load_catalogue
from tcplab.reproduce.catalogue import Claim, Entry, Meta
from tcplab.reproduce.prose import grid_of, render
from tcplab.reproduce.runner import ClaimResult, EntryResult, Run

CLAIM = Claim(
    quote="q",
    where="w",
    metric="utilization",
    op="<",
    value=0.95,
    of="utilization",
    of_at={"bottleneck.loss": 0.0},
    at={"bottleneck.buffer": ["5bdp", "1bdp"], "bottleneck.loss": 0.06},
)


def _run(buffer: str, loss: float, seed: int, utilization: float) -> Run:
    point = {"bottleneck.buffer": buffer, "bottleneck.loss": loss}
    return Run(point, seed, f"{buffer}{loss}{seed}", {"aggregate": {"utilization": utilization}})


def _result() -> tuple[ClaimResult, EntryResult]:
    meta = Meta(paper="acw", figure="Fig. 4", title="t", claims=[CLAIM])
    raw = {"sweep": {"bottleneck.buffer": ["5bdp", "1bdp"], "bottleneck.loss": [0.0, 0.06]}}
    res = EntryResult(Entry("acw-x", None, meta, raw))  # type: ignore[arg-type]
    point = {"bottleneck.buffer": "1bdp", "bottleneck.loss": 0.06}
    c = ClaimResult(res.entry, CLAIM, "disagree", ours=0.9, ci=0.0, point=point)
    c.control = ClaimResult(res.entry, CLAIM, "agree", ours=0.7, ci=0.0, point=point)
    res.claims = [c]
    # the control's runs: the claim's points (loss 0.06) and its reference's (loss 0.0)
    c.control_runs = [
        _run("1bdp", 0.06, 1, 0.70),
        _run("1bdp", 0.06, 2, 0.80),
        _run("1bdp", 0.0, 1, 0.90),
        _run("1bdp", 0.0, 2, 0.94),
        _run("5bdp", 0.06, 1, 0.60),
    ]
    return c, res


def test_a_control_template_defaults_unnamed_axes_to_the_claims_point():
    c, res = _result()
    # loss unnamed: the claim's 0.06, so (0.70 + 0.80) / 2 = 0.75, not the mean of all four
    # 1 BDP runs (0.835)
    assert render("{{control: utilization @ bottleneck.buffer = 1bdp}}", c, res, {}) == "0.75"
    # buffer unnamed too: the claim's reported point (1 BDP), not 5 BDP's 0.60
    assert render("{{control: utilization}}", c, res, {}) == "0.75"
    # a named axis overrides the claim's point: the reference's runs, (0.90 + 0.94) / 2
    text = "{{control: utilization @ bottleneck.loss = 0.0 | .2f}}"
    assert render(text, c, res, {}) == "0.92"


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
metrics = ["retransmission_rate", "total_goodput_bps"]

[catalogue]
paper = "acd"
figure = "Table 1"
title = "prose"

[[catalogue.claims]]
quote = "q"
where = "w"
metric = "retransmission_rate"
op = "<="
value = 0.5
at = { "flows[*].cc" = "bbr" }
explain = "ours {{retransmission_rate}}, CUBIC's {{retransmission_rate @ flows[*].cc = cubic}}"
"""


def test_a_sweeps_metrics_list_is_not_an_axis_a_template_must_name(tmp_path):
    """``[sweep] metrics`` lists the table's columns (runs/sweep.py RESERVED): a template
    in an entry that has one (acd-table1, acd-table2 ...) loads without naming it."""
    root = tmp_path / "papers" / "acd"
    root.mkdir(parents=True)
    (root / "acd-table98-prose.toml").write_text(ENTRY)
    (entry,) = load_catalogue(tmp_path / "papers")
    assert grid_of(entry.raw) == {"flows[*].cc": ["bbr", "cubic"]}
