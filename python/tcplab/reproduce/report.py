"""The catalogue's outputs: one plot per entry in the paper's form (a metric against the
paper's x axis with the published points, or the time series the paper shows), a table
of every claim (claims.csv), and a report in Markdown and HTML with the plots inline."""

from __future__ import annotations

import html
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.analysis.checks import metric_value
from tcplab.reproduce.catalogue import PAPERS
from tcplab.reproduce.runner import VERDICTS, EntryResult, at_point


def plot_entry(res: EntryResult, path: Path) -> bool:
    """Draw ``res``'s figure into ``path``; False if the entry has nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = res.entry.meta
    if not res.runs:
        return False
    if meta.x:
        metrics = meta.plot or sorted({c.metric for c in meta.claims if c.metric})
        fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.6), squeeze=False)
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
            ax.set_xticks(range(len(xs)), xs, rotation=30, fontsize=8)
            ax.set_xlabel(meta.x)
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(
            f"{meta.figure}: {meta.title}\n(x: published values)"
            if meta.published
            else f"{meta.figure}: {meta.title}",
            fontsize=9,
        )
    else:
        run = res.runs[0]
        series = pd.read_parquet(res.out / "runs" / run.digest / "series.parquet")
        col = meta.series
        if col not in series:
            return False
        fig, ax = plt.subplots(figsize=(9, 3.6))
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
    plt.close(fig)
    return True


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
                    "verdict": c.verdict,
                    "explanation": c.claim.explain,
                }
            )
    return pd.DataFrame(rows)


def counts(results: list[EntryResult]) -> dict[str, Counter]:
    out: dict[str, Counter] = {p: Counter() for p in PAPERS}
    for res in results:
        for c in res.claims:
            out[res.entry.meta.paper][c.verdict] += 1
    return {p: c for p, c in out.items() if c}


def write_report(results: list[EntryResult], out: Path, header: dict[str, Any]) -> list[Path]:
    """Write plots/, claims.csv, report.md and report.html into ``out``."""
    out = Path(out)
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    images = {}
    for res in results:
        p = plots / f"{res.entry.name}.png"
        if plot_entry(res, p):
            images[res.entry.name] = p.relative_to(out)
    table = claims_table(results)
    table.to_csv(out / "claims.csv", index=False)
    (out / "report.md").write_text(_markdown(results, images, header))
    (out / "report.html").write_text(_html(results, images, header))
    return [out / "report.md", out / "report.html", out / "claims.csv"]


# Lists what tcplab put in docs/results/, so that a later --docs replaces those files
# and nothing else (issue 21: a user's files there were deleted with the directory).
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

    from tcplab.errors import SpecError

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
        (docs / f"{name}.{ext}").write_text(text)


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


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
    return f"wall time {header['wall_s']:.0f} s on {header['workers']} workers ({done})"


def _markdown(results: list[EntryResult], images: dict[str, Path], header: dict[str, Any]) -> str:
    lines = [
        "# Results: the five papers' claims, reproduced by the catalogue",
        "",
        "Generated by `" + header["command"] + "` from `experiments/papers/` (do not edit by hand: "
        "rerun the command). Each claim is a check on our runs (mean over the seeds of its grid point, "
        "± the standard deviation); **agree**: the check holds; **partly**: only its direction holds; "
        "**disagree**: neither; **not run**: the experiment cannot be built yet.",
        "",
        f"tcplab {header['version']}, {'quick' if header['quick'] else 'full'} catalogue: "
        f"{header['entries']} entries, {header['runs']} runs, {_timing(header)}.",
        "",
        "| paper | " + " | ".join(VERDICTS) + " |",
        "|---|" + "---|" * len(VERDICTS),
    ]
    for paper, c in counts(results).items():
        lines.append(
            f"| {PAPERS[paper]} | " + " | ".join(str(c.get(v, 0)) for v in VERDICTS) + " |"
        )
    lines += [
        "",
        "Scenario tests in Rust (`crates/sim/tests/*scenarios.rs`) assert the engine-level "
        "figures that the catalogue builds on; docs/variants.md explains each variant's choices.",
        "",
    ]
    for paper in PAPERS:
        mine = [r for r in results if r.entry.meta.paper == paper]
        if not mine:
            continue
        lines += [f"## {PAPERS[paper]}", ""]
        for res in mine:
            m = res.entry.meta
            lines += [
                f"### {m.figure}: {m.title}",
                "",
                f"`{res.entry.path.as_posix()}`"
                + (f"; not run: {m.needs}" if m.needs else f"; {len(res.runs)} runs"),
                "",
            ]
            if res.entry.name in images:
                lines += [f"![{m.figure}]({images[res.entry.name].as_posix()})", ""]
            lines += [
                "| where | quote | published | check | ours | verdict | explanation |",
                "|---|---|---|---|---|---|---|",
            ]
            for c in res.claims:
                lines.append(
                    "| "
                    + " | ".join(
                        _cell(x)
                        for x in (
                            c.claim.where,
                            c.claim.quote,
                            c.claim.published,
                            c.check_text(),
                            c.ours_text(),
                            f"**{c.verdict}**",
                            c.claim.explain,
                        )
                    )
                    + " |"
                )
            lines.append("")
    return "\n".join(lines) + "\n"


def _html(results: list[EntryResult], images: dict[str, Path], header: dict[str, Any]) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>tcplab catalogue</title><style>",
        "body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}table{border-collapse:collapse;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}"
        ".agree{background:#dfd}.partly{background:#ffd}.disagree{background:#fdd}.notrun{background:#eee}"
        "img{max-width:100%}</style></head><body>",
        "<h1>Results: the five papers' claims, reproduced by the catalogue</h1>",
        f"<p>Generated by <code>{e(header['command'])}</code>; tcplab {e(header['version'])}, "
        f"{'quick' if header['quick'] else 'full'} catalogue: {header['entries']} entries, {header['runs']} runs, "
        f"{e(_timing(header))}.</p>",
        "<table><tr><th>paper</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS) + "</tr>",
    ]
    for paper, c in counts(results).items():
        parts.append(
            f"<tr><td>{e(PAPERS[paper])}</td>"
            + "".join(f"<td>{c.get(v, 0)}</td>" for v in VERDICTS)
            + "</tr>"
        )
    parts.append("</table>")
    for paper in PAPERS:
        mine = [r for r in results if r.entry.meta.paper == paper]
        if not mine:
            continue
        parts.append(f"<h2>{e(PAPERS[paper])}</h2>")
        for res in mine:
            m = res.entry.meta
            parts.append(
                f"<h3>{e(m.figure)}: {e(m.title)}</h3><p><code>{e(res.entry.path.as_posix())}</code></p>"
            )
            if res.entry.name in images:
                parts.append(
                    f"<img src='{e(images[res.entry.name].as_posix())}' alt='{e(m.figure)}'>"
                )
            parts.append(
                "<table><tr><th>where</th><th>quote</th><th>published</th><th>check</th><th>ours</th>"
                "<th>verdict</th><th>explanation</th></tr>"
            )
            for c in res.claims:
                cls = c.verdict.replace(" ", "")
                parts.append(
                    "<tr>"
                    + "".join(
                        f"<td>{e(str(x))}</td>"
                        for x in (
                            c.claim.where,
                            c.claim.quote,
                            c.claim.published,
                            c.check_text(),
                            c.ours_text(),
                        )
                    )
                    + f"<td class='{cls}'><b>{e(c.verdict)}</b></td><td>{e(c.claim.explain)}</td></tr>"
                )
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
