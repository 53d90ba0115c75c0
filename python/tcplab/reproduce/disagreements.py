"""The report's section on the claims whose main check fails, and what explains each:
the claims' explanations and their controls' outcomes (:func:`control_status`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tcplab.reproduce.report_text import _cell
from tcplab.reproduce.runner import EntryResult


def _explain(c: Any) -> str:
    """A claim's explanation, followed by its control's outcome when it has one, or by
    what was tried when no single setting can test it (``open``)."""
    tried = f"Open: {c.open_text}" if c.claim.open else ""
    blind = f"Untestable: {c.claim.untestable}." if c.verdict == "untestable" else ""
    return " ".join(x for x in (blind, c.explain_text, c.control_text(), tried) if x)


OPEN_TRIED = "open, with what was tried: no single setting tests the cause"
"""The status of a disagreement whose claim says (``open``) why no control fits."""


def control_status(c: Any) -> str:
    """What explains a claim whose main check fails, in a few words: only a control that
    sets a condition the paper plausibly had (``kind = "condition"``, with its evidence)
    can explain it; a diagnostic control shows what moves the number, and the
    disagreement stays open."""
    ctl = c.claim.control
    if c.control is None and c.claim.open:
        return OPEN_TRIED
    if c.control is None or ctl is None:
        return "open: no control experiment yet"
    if c.control.verdict == "not run":
        return "open: its control gave no value"
    if ctl.kind == "diagnostic":
        if c.control.verdict != c.verdict:
            return f"open; a diagnostic (not the paper's condition) moves it to {c.control.verdict}"
        return "open; a diagnostic did not move it"
    if c.control.verdict == "inconclusive":
        # Too few seeds under the control to tell: the cause is not shown, only that the
        # disagreement does not hold robustly without it.
        return "weakens under a condition the paper had (inconclusive there)"
    if c.control.verdict == "agree":
        return "explained: agrees under a condition the paper had (evidence given)"
    if c.control.verdict != c.verdict:
        return f"moves to {c.control.verdict} under a condition the paper had (evidence given)"
    return "open: a condition the paper had did not move it"


def _disagreements(results: list[EntryResult]) -> list[str]:
    """Every claim of the papers whose main check fails (labelled disagree, or partly
    where only the direction holds), and what explains it (:func:`control_status`)."""
    rows = []
    status_count: Counter = Counter()
    labels: Counter = Counter()
    for res in results:
        if res.entry.meta.diagnostic:
            continue
        for k, c in enumerate(res.claims, 1):
            if c.main != "fails" or c.verdict == "untestable":
                continue
            status = control_status(c)
            status_count[status] += 1
            labels[c.verdict] += 1
            rows.append(
                f"| [{res.entry.name} #{k}](#{res.entry.name}-{k}) | {_cell(res.entry.meta.figure)} "
                f"| {c.label} | {status} | {_cell(_explain(c) or '(none)')} |"
            )
    summary = ", ".join(f"{n} {s}" for s, n in sorted(status_count.items()))
    by_label = ", ".join(f"{n} {v}" for v, n in sorted(labels.items()))
    return [
        '<a id="disagreements"></a>',
        "",
        "## Claims whose main check fails, and what explains them",
        "",
        f"{len(rows)} claims of the papers fail their main check"
        + (f" ({by_label}): {summary}." if rows else "."),
        "A control is the claim judged again on runs with one setting changed (`control` in "
        "the entry). Only a **condition** control, one that sets what the paper plausibly had "
        "and our main runs lack (its evidence given: the paper's text, its simulator or kernel "
        "version), can explain a disagreement; a **diagnostic** (a kernel the paper did not "
        "run, a changed gain, added loss, another reading of the text) shows what moves the "
        "number and leaves the disagreement open. Where no single setting can test the "
        "suspected cause (another simulator's code, or the swept axis itself), the claim says "
        "what was tried (`open`).",
        "",
        "| claim | figure | label | status | explanation |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]
