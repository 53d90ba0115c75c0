"""The report's tallies: verdicts per paper, each sentence of a paper counted once (the
headline table of report.md and report.html, ``tcplab reproduce``'s closing lines), and
the overview of verdicts per entry."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.report_text import _cell
from tcplab.reproduce.runner import VERDICTS, EntryResult

DIAGNOSTICS = "diagnostics"
"""The tally key of the catalogue's own diagnostics (entries with ``diagnostic``)."""


FEWER_SEEDS = "fewer seeds than the paper"
"""The tally column of the labels that rest on fewer seeds than the paper used."""


TALLY_COLUMNS = (*VERDICTS, FEWER_SEEDS)
"""The tallies' columns: each verdict, and apart from them the labels on too few seeds
(``untestable`` is a verdict of its own column, not counted as agree or disagree)."""


def tally_key(c: Any) -> str:
    """The tally column of one claim result: its verdict, or :data:`FEWER_SEEDS` when the
    label rests on fewer seeds than the paper used (an untestable claim stays untestable:
    more seeds would not let the metric see it)."""
    if c.short_of_paper and c.verdict != "untestable":
        return FEWER_SEEDS
    return c.verdict


def counts(results: list[EntryResult]) -> dict[str, Counter]:
    """Verdict tallies per paper, each sentence of a paper counted once (a quote checked
    in several entries or at several points counts under the worst of its verdicts that
    ran; a label on fewer seeds than the paper's counts apart, :func:`tally_key`), and
    the catalogue's diagnostics apart under ``DIAGNOSTICS``."""
    per_quote: dict[tuple[str, str], list[Any]] = {}
    diag: Counter = Counter()
    for res in results:
        for c in res.claims:
            if res.entry.meta.diagnostic:
                diag[tally_key(c)] += 1
                continue
            key = (res.entry.meta.paper, " ".join(c.claim.quote.split()))
            per_quote.setdefault(key, []).append(c)
    out: dict[str, Counter] = {p: Counter() for p in PAPERS}
    for (paper, _), claims in per_quote.items():
        ran = [c for c in claims if c.verdict != "not run"] or claims
        out[paper][tally_key(max(ran, key=lambda c: VERDICTS.index(c.verdict)))] += 1
    tallies = {p: c for p, c in out.items() if c}
    if diag:
        tallies[DIAGNOSTICS] = diag
    return tallies


def tally_label(key: str) -> str:
    return (
        "catalogue diagnostics (controls, authors' code, synthetic traces; not counted above)"
        if key == DIAGNOSTICS
        else PAPERS[key]
    )


def _overview(results: list[EntryResult]) -> list[str]:
    """One row per entry (figure or table): how many of its claims got each verdict."""
    lines = [
        '<a id="overview"></a>',
        "",
        "## Overview by figure",
        "",
        "| entry | figure | " + " | ".join(VERDICTS) + " |",
        "|---|---|" + "---|" * len(VERDICTS),
    ]
    for res in results:
        c = Counter(x.verdict for x in res.claims)
        tag = " (diagnostic)" if res.entry.meta.diagnostic else ""
        lines.append(
            f"| [{res.entry.name}](#{res.entry.name}){tag} | {_cell(res.entry.meta.figure)} | "
            + " | ".join(str(c.get(v, 0) or "") for v in VERDICTS)
            + " |"
        )
    return lines + [""]
