"""The catalogue's outputs: one plot per entry in the paper's form (a metric against the
paper's x axis with the published points, or the time series the paper shows), a table
of every claim (claims.csv), and a report in Markdown and HTML with the plots inline.

This module writes them (:func:`write_report`) and holds report.md's frame; the pieces
are split by concern (issue 44): entry_plot.py (each entry's plot), tallies.py (verdicts
per paper and per entry), headline.py (the papers' main claims), disagreements.py (the
claims whose main check fails and what explains them), seed_tables.py (seeds and
durations against the papers'), report_html.py (report.html), report_text.py (cells,
numbers, links, the header's scope and timing) and docs_copy.py (``--docs``). The names
other modules and tests read from here are re-exported."""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.disagreements import _disagreements, _explain, control_status
from tcplab.reproduce.docs_copy import RESULTS_MARKER, check_docs_results, copy_report
from tcplab.reproduce.entry_plot import SERIES_NOTE, plot_entry
from tcplab.reproduce.headline import _headline_lines, _headline_table, headline_word, headlines
from tcplab.reproduce.report_html import _html
from tcplab.reproduce.report_text import (
    ENTRIES,
    _cell,
    _entry_copy,
    _link,
    _plural,
    _repo_path,
    _scope,
    _timing,
)
from tcplab.reproduce.runner import EntryResult, fill_prose
from tcplab.reproduce.seed_tables import _shortened, _status, seed_line
from tcplab.reproduce.tallies import (
    DIAGNOSTICS,
    FEWER_SEEDS,
    TALLY_COLUMNS,
    _overview,
    counts,
    tally_key,
    tally_label,
)
from tcplab.reproduce.timeseries_plot import plot_timeseries
from tcplab.storage.ownership import write_owned

__all__ = [
    "DIAGNOSTICS",
    "ENTRIES",
    "FEWER_SEEDS",
    "REPORT_FILES",
    "RESULTS_MARKER",
    "SERIES_NOTE",
    "TALLY_COLUMNS",
    "check_docs_results",
    "claims_table",
    "control_status",
    "copy_report",
    "counts",
    "draw_plots",
    "headline_word",
    "headlines",
    "plot_entry",
    "seed_line",
    "tally_key",
    "tally_label",
    "write_report",
]


def claims_table(results: list[EntryResult]) -> pd.DataFrame:
    rows = []
    for res in results:
        for c in res.claims:
            rows.append(
                {
                    "paper": res.entry.meta.paper,
                    "entry": res.entry.name,
                    "figure": res.entry.meta.figure,
                    "where": c.claim.where,
                    "quote": c.claim.quote,
                    "published": c.claim.published,
                    "check": c.check_text(),
                    "ours": c.ours_text(),
                    "mean": c.ours,
                    "spread": c.spread,
                    "seeds": c.seeds,
                    "ci95": c.ci,
                    "seeds_holding": c.seeds_holding,
                    "verdict": c.verdict,
                    "quick": c.quick,
                    "main_check": c.main,
                    "direction": c.direction,
                    "effect_ratio": c.effect,
                    "undecided_because": c.reason,
                    "headline": c.claim.headline,
                    "explanation": c.explain_text,
                    "control": c.control_text(),
                    "control_kind": c.claim.control.kind if c.claim.control else "",
                    "control_verdict": c.control.verdict if c.control else "",
                    "open": c.open_text,
                }
            )
    return pd.DataFrame(rows)


REPORT_FILES = ("report.md", "report.html", "claims.csv")


def write_report(results: list[EntryResult], out: Path, header: dict[str, Any]) -> list[Path]:
    """Write plots/, claims.csv, report.md and report.html into ``out`` under the one
    rule (storage/ownership.py write_owned): a file of those names that tcplab did not
    write there (outputs.json) is refused, never overwritten; plots of an earlier report
    into ``out`` that this one does not draw are removed."""
    fill_prose(results)
    out = Path(out)

    def write(tmp: Path) -> list[str]:
        plots = tmp / "plots"
        plots.mkdir()
        images, series_images = {}, {}
        for res in results:
            name = res.entry.name
            drawn = res.plots if res.plots is not None else draw_plots(res)
            if drawn.get("timeseries") is not None:
                ts = plots / f"{name}-timeseries.png"
                ts.write_bytes(drawn["timeseries"])
                series_images[name] = ts.relative_to(tmp)
            if drawn.get("entry") is not None:
                p = plots / f"{name}.png"
                p.write_bytes(drawn["entry"])
                images[name] = p.relative_to(tmp)
        copies = []
        for res in results:
            copy = tmp / _entry_copy(res.entry.path)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(res.entry.path, copy)
            copies.append(copy.relative_to(tmp).as_posix())
        claims_table(results).to_csv(tmp / "claims.csv", index=False)
        (tmp / "report.md").write_text(_markdown(results, images, header, series_images))
        (tmp / "report.html").write_text(_html(results, images, header, series_images))
        drawn = [p.as_posix() for p in [*images.values(), *series_images.values()]]
        return [*REPORT_FILES, *sorted(drawn), *sorted(copies)]

    write_owned(out, write, "-o", kind="catalogue report", remove_stale=True)
    return [out / name for name in REPORT_FILES]


_DRAWING = threading.Lock()  # matplotlib is not thread-safe: one figure at a time


def draw_plots(res: EntryResult) -> dict[str, bytes]:
    """An entry's plots as PNG bytes, "timeseries" and "entry" (each absent when it has
    nothing to draw). ``tcplab reproduce`` draws them as soon as the entry is judged
    (runner.run_catalogue's ``after``), in its thread while other entries' runs keep the
    workers busy, rather than all at the end while both workers wait; only the report
    writes them, so an interrupted reproduce leaves none. The plots read the entry's own
    runs only (not the prose, filled once every entry has run)."""
    out: dict[str, bytes] = {}
    with _DRAWING, tempfile.TemporaryDirectory(prefix="tcplab-plots-") as tmp:
        ts = Path(tmp) / "timeseries.png"
        if res.entry.meta.timeseries and plot_timeseries(res, ts):
            out["timeseries"] = ts.read_bytes()
        # Without an x axis the summary plot is itself a bare time series: the
        # timeseries, which adds the paper's marks, replaces it.
        p = Path(tmp) / "entry.png"
        if ("timeseries" not in out or res.entry.meta.x) and plot_entry(res, p):
            out["entry"] = p.read_bytes()
    return out


def _markdown(
    results: list[EntryResult],
    images: dict[str, Path],
    header: dict[str, Any],
    series_images: dict[str, Path] | None = None,
) -> str:
    lines = [
        "# Results: the five papers' claims, reproduced by the catalogue",
        "",
        "Generated by `" + header["command"] + "` from `experiments/papers/` (do not edit by hand: "
        "rerun the command). Each claim is a check on our runs at its grid point, judged over "
        "the seeds with a 95 % confidence interval of the mean (`reproduce/judge.py`; 'ours' shows "
        "the mean ± that half-width and in how many seeds the check holds on its own), read "
        "against the metric's practical-significance threshold, the difference below which two "
        "values are the same (`reproduce/thresholds.py`: 0.01 of a share, a Jain index or the "
        "link's utilisation; 5 % of a retransmission count; 2 % of an RTT; 1 % of a rate): "
        "**agree**: the check holds beyond the noise and the threshold; **partly** (direction "
        "only): the check fails and only its weaker form, the same comparison loosened, holds, "
        "with ours within 0.5x-2x of the paper's effect (`thresholds.EFFECT_BAND`; the "
        "effect-size ratio, ours / the paper's, is given beside it); "
        "**inconclusive**: the seeds cannot decide the main check even after they were doubled "
        "at the claim's points up to the paper's own repetition count (ACD 30, ACW 10, TUM 5, "
        "else 10; `reproduce/seeds.py`), or the claim rests on one value (n = 1, or seeds that "
        "are identical because the runs draw no randomness: no decision from nothing); "
        "**disagree**: the main check fails beyond the noise (not reproduced), whatever its "
        "weaker form says unless that holds within the effect band: a decided miss is never "
        "inconclusive, and a direction at a tenth of the paper's effect is a miss (its factor "
        "given); **untestable with this metric**: the paper's own effect is below the metric's "
        "practical threshold, so no result of this check could show it (the entry says why); "
        "**not run**: the experiment cannot be built yet, or our value is undefined (said "
        'which). A label that rests on fewer seeds than the paper used says so ("agree (3 of '
        'the paper\'s 10 seeds)") and is counted apart, under "fewer seeds than the paper"; '
        'a "reproduced" headline whose check plain BBR passes too says it does not tell the '
        "algorithms apart. `--quick` verdicts are marked quick: shortened runs, never a "
        "decision.",
        "",
        f"tcplab {header['version']}"
        + (f", commit {header['commit']}" if header.get("commit") else "")
        + (f", {header['date']}" if header.get("date") else "")
        + f"; {_scope(header)}: "
        f"{_plural(header['entries'], 'entry', 'entries')}, {_plural(header['runs'], 'run')}, "
        f"{_timing(header)}.",
        "",
        "Contents: [tallies](#tallies) · [overview by figure](#overview)"
        " · [disagreements](#disagreements) · [seeds and durations](#shortened)"
        # Only the papers this report has a section for: a one-entry report linked to four
        # absent ones.
        + "".join(
            f" · [{PAPERS[p]}](#{p})"
            for p in PAPERS
            if any(r.entry.meta.paper == p for r in results)
        ),
        "",
        '<a id="tallies"></a>Each sentence of a paper counts once (under the worst verdict of '
        "its checks); the catalogue's own diagnostics are counted apart, and so are labels on "
        "fewer seeds than the paper used (last column) and untestable checks.",
        "",
        "| paper | " + " | ".join(TALLY_COLUMNS) + " |",
        "|---|" + "---|" * len(TALLY_COLUMNS),
    ]
    for paper, c in counts(results).items():
        lines.append(
            f"| {tally_label(paper)} | "
            + " | ".join(str(c.get(v, 0)) for v in TALLY_COLUMNS)
            + " |"
        )
    lines += [""] + _headline_table(results)
    lines += [
        "Scenario tests in Rust (`crates/sim/tests/*scenarios.rs`) assert the engine-level "
        "figures that the catalogue builds on; docs/variants.md explains each variant's choices.",
        "",
    ]
    lines += _overview(results)
    lines += _disagreements(results)
    lines += _shortened(results)
    for paper in PAPERS:
        mine = [r for r in results if r.entry.meta.paper == paper]
        if not mine:
            continue
        lines += [f'<a id="{paper}"></a>', "", f"## {PAPERS[paper]}", ""]
        lines += _headline_lines(results, paper)
        for res in mine:
            m = res.entry.meta
            lines += [
                f'<a id="{res.entry.name}"></a>',
                "",
                f"### {m.figure}: {m.title}",
                "",
                f"[`{_repo_path(res.entry.path)}`]({_link(res.entry.path)})"
                + (f"; not run: {m.needs}" if m.needs else f"; {_status(res)}")
                + (f"; **diagnostic**: {m.diagnostic}" if m.diagnostic else ""),
                "",
            ]
            if res.entry.name in images:
                lines += [f"![{m.figure}]({images[res.entry.name].as_posix()})", ""]
            if res.entry.name in (series_images or {}):
                shown = series_images[res.entry.name].as_posix()
                lines += [f"![{m.figure}, time series]({shown})", "", SERIES_NOTE, ""]
            lines += [
                "| # | where | quote | published | check | ours | verdict | explanation |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for k, c in enumerate(res.claims, 1):
                anchor = f'<a id="{res.entry.name}-{k}"></a>[{k}]({_link(res.entry.path, c.claim)})'
                lines.append(
                    f"| {anchor} | "
                    + " | ".join(
                        _cell(x)
                        for x in (
                            c.claim.where,
                            c.claim.quote,
                            c.claim.published,
                            c.check_text(),
                            c.ours_text(),
                            f"**{c.label}**",
                            _explain(c),
                        )
                    )
                    + " |"
                )
            lines.append("")
    return "\n".join(lines) + "\n"
