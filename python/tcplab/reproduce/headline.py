"""The papers' main claims (``headline = true``): the words a reader wants first
(reproduced, direction only, ...), the list at the top of each paper's section and the
table of outcomes per paper."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.report_text import _cell, _fmt
from tcplab.reproduce.runner import EntryResult

HEADLINE_WORDS = {
    "agree": "reproduced",
    "partly": "direction only",
    "disagree": "not reproduced",
    "inconclusive": "undecided",
    "untestable": "untestable with this metric",
    "not run": "not run",
}
"""A headline claim's outcome in the words a reader wants first."""


def headline_word(c: Any) -> str:
    """``reproduced`` / ``direction only (effect 0.73x the paper's)`` / ``not
    reproduced (effect 0.096x the paper's)`` / ``undecided (n=1)`` ..., with the seeds
    when fewer than the paper's, ``(quick)`` on --quick runs, and a "reproduced" that
    the baseline passes too says it does not tell the algorithms apart."""
    word = HEADLINE_WORDS[c.verdict]
    if (c.verdict == "partly" or c.outside_band) and not math.isnan(c.effect):
        word += f" (effect {c.effect:.2g}x the paper's)"
    if c.verdict == "inconclusive" and c.reason:
        word += f" ({'one value' if c.reason == 'n=1' else 'identical seeds'})"
    if c.short_of_paper:
        word += f" ({c.seeds} of the paper's {c.paper_seeds} seeds)"
    if c.verdict == "agree" and c.baseline_passes:
        base = ", ".join(f"{k} = {v}" for k, v in c.claim.baseline.items())
        word += (
            f", but it does not tell the algorithms apart: the baseline ({base}) passes "
            f"too with {_fmt(c.baseline.ours)}"
        )
    return word + (" (quick)" if c.quick and c.verdict != "not run" else "")


def _short_ours(c: Any) -> str:
    if c.verdict == "not run":
        return "not run"
    if math.isnan(c.ours):
        return "undefined"
    spread = "" if math.isnan(c.ci) else f" ± {_fmt(c.ci)}"
    target = f" (target {_fmt(c.target)})" if c.claim.of else ""
    where = f" at {c.where}" if c.where else ""
    return f"{_fmt(c.ours)}{spread}, n={c.seeds}{target}{where}"


def headlines(results: list[EntryResult], paper: str) -> list[tuple[EntryResult, int, Any]]:
    """The paper's main claims (``headline = true``), in catalogue order."""
    return [
        (res, k, c)
        for res in results
        if res.entry.meta.paper == paper and not res.entry.meta.diagnostic
        for k, c in enumerate(res.claims, 1)
        if c.claim.headline
    ]


def _headline_lines(results: list[EntryResult], paper: str) -> list[str]:
    rows = headlines(results, paper)
    if not rows:
        return []
    lines = ["**Main claims**, the paper's headline results first (one line each):", ""]
    for res, k, c in rows:
        lines.append(
            f"- **{headline_word(c)}**: {_cell(c.claim.quote)} "
            f"([{res.entry.name} #{k}](#{res.entry.name}-{k})). "
            f"Paper: {_cell(c.claim.published or c.check_text())}; ours: {_short_ours(c)}."
        )
    return lines + [""]


def _headline_table(results: list[EntryResult]) -> list[str]:
    """One row per paper: its main claims by outcome."""
    words = list(dict.fromkeys(HEADLINE_WORDS.values()))
    lines = [
        "Main claims (`headline = true` in the entries; each paper's section lists them "
        "first, with both numbers):",
        "",
        "| paper | " + " | ".join(words) + " |",
        "|---|" + "---|" * len(words),
    ]
    for paper in PAPERS:
        rows = headlines(results, paper)
        if not rows:
            continue
        n = Counter(HEADLINE_WORDS[c.verdict] for _, _, c in rows)
        lines.append(f"| {PAPERS[paper]} | " + " | ".join(str(n.get(w, 0)) for w in words) + " |")
    return lines + [""]
