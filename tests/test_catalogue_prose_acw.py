"""Prose templates that read a claim's control (reproduce/prose.py): the control's runs hold
the claim's points and its reference's (``of_at``), so an axis the template leaves unnamed
must default to the claim's point, as it does for the entry's own runs, and not average the
reference's runs in (found converting acw-fig04-utilisation-vs-loss #4)."""

from tcplab.reproduce.catalogue import Claim, Entry, Meta
from tcplab.reproduce.prose import render
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
    res.control_runs_of[0] = [
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
