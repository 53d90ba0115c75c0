"""report.html: the catalogue's report as one self-contained page, from the same pieces
as report.md (templates/report.html.j2)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.disagreements import _explain
from tcplab.reproduce.entry_plot import SERIES_NOTE
from tcplab.reproduce.headline import _short_ours, headline_word, headlines
from tcplab.reproduce.report_text import _link, _repo_path, _scope, _timing
from tcplab.reproduce.runner import VERDICTS, EntryResult
from tcplab.reproduce.seed_tables import _status
from tcplab.reproduce.tallies import TALLY_COLUMNS, counts, tally_label


def _html(
    results: list[EntryResult],
    images: dict[str, Path],
    header: dict[str, Any],
    series_images: dict[str, Path] | None = None,
) -> str:
    """The report as one self-contained HTML page (templates/report.html.j2), rendered by
    tcplab's one Jinja2 environment (report/html.py: autoescaping, so quotes and
    explanations are text, never markup)."""
    # Here, not at the top: report/html.py imports matplotlib, which `tcplab reproduce
    # --list` and loading the catalogue do not need.
    from tcplab.report.html import environment

    env = environment()
    series = series_images or {}
    sections = []
    for paper in PAPERS:
        mine = [r for r in results if r.entry.meta.paper == paper]
        if not mine:
            continue
        entries = []
        for res in mine:
            m = res.entry.meta
            entries.append(
                {
                    "name": res.entry.name,
                    "figure": m.figure,
                    "title": m.title,
                    "path": _repo_path(res.entry.path),
                    "link": _link(res.entry.path),
                    "status": f"not run: {m.needs}" if m.needs else _status(res),
                    "diagnostic": m.diagnostic,
                    "image": images[res.entry.name].as_posix() if res.entry.name in images else "",
                    "series_image": series[res.entry.name].as_posix()
                    if res.entry.name in series
                    else "",
                    "claims": [
                        {
                            "link": _link(res.entry.path, c.claim),
                            "where": c.claim.where,
                            "quote": c.claim.quote,
                            "published": c.claim.published,
                            "check": c.check_text(),
                            "ours": c.ours_text(),
                            "verdict": c.verdict,
                            "label": c.label,
                            "explain": _explain(c),
                        }
                        for c in res.claims
                    ],
                }
            )
        heads = [
            {
                "word": headline_word(c),
                "quote": c.claim.quote,
                "anchor": f"{res.entry.name}-{k}",
                "ref": f"{res.entry.name} #{k}",
                "paper": c.claim.published or c.check_text(),
                "ours": _short_ours(c),
            }
            for res, k, c in headlines(results, paper)
        ]
        sections.append(
            {"key": paper, "name": PAPERS[paper], "entries": entries, "headlines": heads}
        )
    overview = [
        {
            "name": r.entry.name,
            "figure": r.entry.meta.figure,
            "diagnostic": bool(r.entry.meta.diagnostic),
            "counts": Counter(c.verdict for c in r.claims),
        }
        for r in results
    ]
    return env.get_template("report.html.j2").render(
        header=header,
        series_note=SERIES_NOTE,
        timing=_timing(header),
        scope=_scope(header),
        papers=PAPERS,
        verdicts=VERDICTS,
        tally_columns=TALLY_COLUMNS,
        tallies=[(tally_label(k), c) for k, c in counts(results).items()],
        overview=overview,
        sections=sections,
    )
