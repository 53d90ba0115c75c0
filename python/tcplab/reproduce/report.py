"""The catalogue's outputs: one plot per entry in the paper's form (a metric against the
paper's x axis with the published points, or the time series the paper shows), a table
of every claim (claims.csv), and a report in Markdown and HTML with the plots inline."""

from __future__ import annotations

import math
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.analysis.checks import metric_value
from tcplab.errors import SpecError
from tcplab.reproduce import seeds
from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.runner import VERDICTS, EntryResult, at_point, fill_prose
from tcplab.reproduce.timeseries_plot import plot_timeseries, run_dir
from tcplab.specs.units import parse_time
from tcplab.storage.ownership import write_owned

SERIES_NOTE = (
    "Time series: one of our runs against time; black dashed, the numbers the paper's text "
    "states there. The paper's curve itself is not available (text-only source) and is not drawn."
)


def plot_entry(res: EntryResult, path: Path) -> bool:
    """Draw ``res``'s figure into ``path``; False if the entry has nothing to draw."""
    from tcplab.report.plots import new_figure

    meta = res.entry.meta
    if not res.runs:
        return False
    if meta.x:
        metrics = meta.plot or sorted({c.metric for c in meta.claims if c.metric})
        fig = new_figure(figsize=(5 * len(metrics), 3.6))
        axes = fig.subplots(1, len(metrics), squeeze=False)
        xs = list(dict.fromkeys(str(r.point.get(meta.x)) for r in res.runs))
        others = sorted(
            {tuple((k, str(v)) for k, v in r.point.items() if k != meta.x) for r in res.runs}
        )
        for ax, metric in zip(axes[0], metrics):
            for other in others:
                means, sds = [], []
                for x in xs:
                    sel = at_point(res.runs, {meta.x: x, **dict(other)})
                    vals = pd.Series([metric_value(r.summary, metric) for r in sel], dtype=float)
                    means.append(vals.mean())
                    sds.append(vals.std() if len(vals) > 1 else 0.0)
                label = ", ".join(v for _, v in other) or "tcplab"
                ax.errorbar(range(len(xs)), means, yerr=sds, marker="o", capsize=3, label=label)
            for p in meta.published:
                if p.metric == metric and str(p.x) in xs:
                    ax.scatter(
                        [xs.index(str(p.x))], [p.y], marker="x", s=70, color="black", zorder=5
                    )
                    ax.annotate(
                        p.label,
                        (xs.index(str(p.x)), p.y),
                        textcoords="offset points",
                        xytext=(4, 4),
                        fontsize=7,
                    )
            _mark_claims(ax, meta, metric, xs)
            ax.set_xticks(range(len(xs)), xs, rotation=30, fontsize=8)
            ax.set_xlabel(meta.x)
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(
            f"{meta.figure}: {meta.title}\n(x: published values; grey: the claims' targets, "
            "a bar for 'within', a triangle for 'at least' / 'at most')",
            fontsize=9,
        )
    else:
        run = res.runs[0]
        series = pd.read_parquet(run_dir(res, run) / "series.parquet")
        col = meta.series
        if col not in series:
            return False
        fig = new_figure(figsize=(9, 3.6))
        ax = fig.subplots()
        for fid, g in series.groupby("flow"):
            flows = run.summary.get("flows", [])
            cc = flows[int(fid)]["cc"] if int(fid) < len(flows) else ""
            ax.plot(
                g["time_s"],
                g[col] / (1e6 if col.endswith("_bps") else 1),
                lw=0.8,
                label=f"flow {fid} {cc}",
            )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(col.replace("_bps", " (Mbit/s)"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=4)
        ax.set_title(f"{meta.figure}: {meta.title} (seed {run.seed})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def _mark_claims(ax: Any, meta: Any, metric: str, xs: list[str]) -> None:
    """The paper's numbers that the claims check, where the figure can show them: a claim
    on this metric with a plain target (no reference metric) at points of the x axis is
    drawn at its target, as a bar over its tolerance for ``within`` and a triangle
    pointing the way that passes for ``>=``/``<=``."""
    for k, c in enumerate(meta.claims, 1):
        if c.metric != metric or c.of or c.across or c.value is None or c.needs:
            continue
        at = c.at.get(meta.x)
        if at is None:
            continue
        for x in at if isinstance(at, list) else [at]:
            if str(x) not in xs:
                continue
            i = xs.index(str(x))
            if c.op == "within":
                ax.errorbar(
                    [i], [c.value], yerr=[c.tolerance], fmt="_", color="grey", capsize=6, zorder=4
                )
            else:
                marker = "^" if c.op in (">=", ">") else "v"
                ax.scatter([i], [c.value], marker=marker, s=45, color="grey", zorder=4)
            ax.annotate(
                f"claim {k}", (i, c.value), textcoords="offset points", xytext=(-28, -9), fontsize=6
            )


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
            ts = plots / f"{name}-timeseries.png"
            if res.entry.meta.timeseries and plot_timeseries(res, ts):
                series_images[name] = ts.relative_to(tmp)
            # Without an x axis the summary plot is itself a bare time series: the
            # timeseries, which adds the paper's marks, replaces it.
            p = plots / f"{name}.png"
            if (name not in series_images or res.entry.meta.x) and plot_entry(res, p):
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


# Lists what tcplab put in docs/results/, so that a later --docs replaces those files
# and nothing else (a user's files there were deleted with the directory).
RESULTS_MARKER = ".tcplab-results.json"


def check_docs_results(docs: Path) -> None:
    """Refuse ``docs/results`` unless everything in it is what tcplab wrote there (listed
    in its marker); an absent or empty directory is fine. Called before any run.

    Raises
    ------
    SpecError
        Naming ``--docs`` and the files that are not tcplab's.
    """
    import json

    target = Path(docs) / "results"
    if Path(docs).exists() and not Path(docs).is_dir():
        raise SpecError([("--docs", f"{docs} is a file, not a directory")])
    if not target.exists():
        return
    if not target.is_dir():
        raise SpecError([("--docs", f"{target} is a file, not a directory")])
    try:
        listed = set(json.loads((target / RESULTS_MARKER).read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        listed = set()
    extra = sorted(
        p.relative_to(target).as_posix()
        for p in target.rglob("*")
        if p.name != RESULTS_MARKER and p.relative_to(target).as_posix() not in listed
    )
    if extra:
        shown = ", ".join(extra[:10]) + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
        raise SpecError(
            [
                (
                    "--docs",
                    f"{target} holds files tcplab did not write ({shown}); "
                    "move them away or choose another directory",
                )
            ]
        )


def copy_report(src: Path, docs: Path, name: str = "RESULTS") -> None:
    """Put a written report into the docs: ``docs/RESULTS.md``, ``.html`` and ``docs/results/``.
    ``docs/results/`` is replaced whole, and only when it holds nothing but what tcplab
    wrote there (check_docs_results); the new one is assembled beside it first."""
    import json
    import os
    import tempfile

    docs = Path(docs)
    check_docs_results(docs)
    docs.mkdir(parents=True, exist_ok=True)
    target = docs / "results"
    staged = Path(tempfile.mkdtemp(prefix=".tmp-results-", dir=docs))
    try:
        shutil.copytree(Path(src) / "plots", staged / "results")
        files = sorted(
            p.relative_to(staged / "results").as_posix()
            for p in (staged / "results").rglob("*")
            if p.is_file()
        )
        (staged / "results" / RESULTS_MARKER).write_text(
            json.dumps({"written_by": "tcplab reproduce --docs", "files": files}, indent=1) + "\n"
        )
        if target.exists():
            os.rename(target, staged / "old")
        os.rename(staged / "results", target)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    for ext in ("md", "html"):
        text = (Path(src) / f"report.{ext}").read_text().replace("plots/", "results/")
        # The docs link to the repository's entries, not to the report's copies.
        for before in ("](", 'href="'):
            text = text.replace(f"{before}{ENTRIES}/", f"{before}../experiments/papers/")
        (docs / f"{name}.{ext}").write_text(text)


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


def _seconds(text: Any) -> float:
    try:
        return parse_time(str(text)) / 1e9
    except (ValueError, TypeError):
        return 0.0


def _repo_path(path: Path) -> str:
    """An entry's path as the repository spells it (experiments/papers/...)."""
    parts = Path(path).as_posix().split("/")
    if "papers" in parts:
        return "experiments/" + "/".join(parts[parts.index("papers") :])
    return Path(path).as_posix()


ENTRIES = "catalogue"
"""The folder of a written report that holds a copy of each entry's TOML, which the
report's links point to, so they work wherever the report is (they pointed
at ../experiments/..., dead outside a checkout). docs/RESULTS.md points at the
repository's own files instead (copy_report)."""


def _entry_copy(path: Path) -> str:
    """Where a report keeps its copy of an entry's TOML: catalogue/<paper>/<name>.toml."""
    parts = Path(path).as_posix().split("/")
    rest = parts[parts.index("papers") + 1 :] if "papers" in parts else parts[-1:]
    return f"{ENTRIES}/" + "/".join(rest)


def _link(path: Path, claim: Any = None) -> str:
    """A link from the report to its copy of an entry's TOML, at the claim's line if
    given."""
    target = _entry_copy(path)
    if claim is None:
        return target
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return target
    head = claim.quote[:40]
    # the claim's own `quote = ` line first: a header comment may quote the same sentence
    for own in (True, False):
        for n, line in enumerate(lines, 1):
            if head and head in line and (not own or line.startswith("quote = ")):
                return f"{target}#L{n}"
    return target


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


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


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else (f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _scope(header: dict[str, Any]) -> str:
    """ "full catalogue" only for the whole catalogue; a selection says it is one."""
    kind = "quick" if header["quick"] else "full"
    if header.get("selection"):
        return f"{kind} runs of a selection ({', '.join(header['selection'])})"
    return f"{kind} catalogue"


def _timing(header: dict[str, Any]) -> str:
    """The invocation's wall time, and how much of the work it did itself: a report drawn
    from cached runs took far less than running them (the first run's time is the one that
    says how long the catalogue takes)."""
    cached = header.get("cached", 0)
    done = (
        f"all {header['runs']} computed in it"
        if not cached
        else (
            f"{header['runs'] - cached} computed in it, {cached} reused from the cache of an earlier invocation"
        )
    )
    repaired = header.get("repaired", 0)
    if repaired:
        done += (
            f"; {repaired} of those computed were stored runs found damaged (a file differing "
            "from its manifest's digest) and computed again"
        )
    controls = header.get("control_runs", 0)
    if controls:
        reused = header.get("control_cached", 0)
        done += f"; plus {controls} runs of the claims' controls, {controls - reused} computed"
    return f"wall time {header['wall_s']:.0f} s on {header['workers']} workers ({done})"


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


def _status(res: EntryResult) -> str:
    """How many runs an entry made, how many seeds it ran and why, against the paper's
    count."""
    text = f"{len(res.runs)} runs; {seed_line(res)}"
    return text


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
