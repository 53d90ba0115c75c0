"""Seeds and durations against the papers': the report's table of the entries that run
fewer seeds or shorter runs than their paper states, and each entry's seed line."""

from __future__ import annotations

import math

from tcplab.reproduce import seeds
from tcplab.reproduce.kernel_profile import profile_line
from tcplab.reproduce.report_text import _plural, _seconds
from tcplab.reproduce.runner import EntryResult


def _shortened(results: list[EntryResult]) -> list[str]:
    """The entries that run fewer seeds or shorter runs than their paper states, and by
    how much: the catalogue's 15-minute budget on 2 cores is why (README)."""
    rows = []
    cost_ours = cost_paper = 0.0
    for res in results:
        raw = res.entry.raw
        if not raw or not res.runs:
            continue
        paper = res.entry.meta.paper
        base = int((raw.get("sweep") or {}).get("repeat", 1))
        dur = _seconds((raw.get("experiment") or {}).get("duration", "0s"))
        want_n = seeds.PAPER_SEEDS.get(paper)
        want_d = seeds.PAPER_DURATION_S.get(paper)
        axes = [v for k, v in (raw.get("sweep") or {}).items() if isinstance(v, list)]
        points = math.prod(len(v) for v in axes) if axes else 1
        cost_ours += len(res.runs) * dur
        n, d = max(base, want_n or base), max(dur, want_d or dur)
        cost_paper += points * n * d
        if (want_n and base < want_n) or (want_d and dur < want_d):
            paper_says = " x ".join(
                x
                for x in (f"{want_n} seeds" if want_n else "", f"{want_d:g} s" if want_d else "")
                if x
            )
            more = f"; the claims' points: {res.more_seeds} seeds" if res.more_seeds else ""
            rows.append(
                f"| [{res.entry.name}](#{res.entry.name}) | {base} seeds x {dur:g} s{more} "
                f"| {paper_says} |"
            )
    factor = cost_paper / cost_ours if cost_ours else 1.0
    return [
        '<a id="shortened"></a>',
        "",
        "## Seeds and durations against the papers'",
        "",
        "The papers state their repetitions (ACD 30 simulations, ACW 10 runs of 300 s, TUM five) "
        "for all their experiments. Every judged claim runs at that count at the grid points "
        "it reads (`reproduce/seeds.py`); the rest of an entry's grid, drawn in its figures "
        "and read by no claim, keeps the entry's first pass (below), and some entries run "
        "shorter than the paper. Run whole at the papers' counts and lengths, this catalogue "
        f"would simulate {factor:.1f}x the traffic it does.",
        "",
        "| entry | ours | the paper's |",
        "|---|---|---|",
        *rows,
        "",
    ]


def _status(res: EntryResult) -> str:
    """How many runs an entry made, how many seeds it ran and why, against the paper's
    count."""
    return f"{len(res.runs)} runs; {seed_line(res)}; {profile_line(res.entry.raw)}"


def seed_line(res: EntryResult) -> str:
    """The entry's seeds: its sweep's repeat, what the claims' points were raised to, the
    paper's count, and why fewer (the entry's ``max_seeds_why``)."""
    meta = res.entry.meta
    base = int((res.entry.raw.get("sweep") or {}).get("repeat", 1))
    paper = seeds.PAPER_SEEDS.get(meta.paper)
    text = f"seeds: {base} per point"
    if res.more_seeds:
        where = "the claims' points" if paper else "undecided claims' points"
        text += (
            f", raised to {res.more_seeds} at {where} "
            f"(cap {res.seed_cap}; `{seeds.MORE_SEEDS_DIR}/`)"
        )
    if paper is None:
        return text + "; the paper states no count"
    text += f"; the paper's {paper}"
    if meta.max_seeds is not None and meta.max_seeds < paper:
        text += f"; capped at {meta.max_seeds} by the entry (`max_seeds`): {meta.max_seeds_why}"
    elif max(base, res.more_seeds) < paper:
        text += "; not raised: every claim's seeds gave one value, or it did not run"
    short = sum(c.short_of_paper for c in res.claims)
    if short:
        text += f"; {_plural(short, 'label')} on fewer seeds than the paper's, counted apart"
    return text
