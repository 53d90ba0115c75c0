"""Running the catalogue: each runnable entry as a sweep (cached, resumable, parallel,
through :mod:`tcplab.runs.sweep`), each claim evaluated on the runs at its grid point, with the
mean and spread over seeds, and a verdict.

Verdicts: **agree**, the claim's check holds beyond the seeds' noise and the metric's
practical threshold (judge.py, thresholds.py); **partly** ("direction only"), the check
fails but its weaker form (the same comparison, looser) holds, and ours is within
``thresholds.EFFECT_BAND`` (0.5x-2x) of the paper's effect where that effect is defined;
**inconclusive**, the seeds cannot decide the main check: it is undecided after the seeds
were raised to the paper's count, or rests on one value (n = 1, identical seeds);
**disagree** ("not reproduced"), the main check fails beyond the noise, whatever its weaker
form says unless that holds within the effect band: a decided miss is never
"inconclusive"; **untestable**, the metric cannot see the claim (the entry's
``untestable`` says why: the paper's own effect is below the metric's practical band), so
the check is reported and not counted; **not run**, its experiment cannot be built yet
(``needs`` says why).

Every judged claim runs at its paper's seed count (``seeds.PAPER_SEEDS``) at the points it
reads, decided or not: the entry's own ``repeat`` is a first pass. A label that still rests
on fewer seeds than the paper used (an entry's ``max_seeds``, or runs that failed) says so
("agree (3 of the paper's 10 seeds)"), and the tallies count it apart
(``ClaimResult.short_of_paper``). A claim with a ``baseline`` point is judged there too:
when the baseline passes as well, the claim does not tell the algorithms apart, and the
report says so beside a "reproduced".
"""

from __future__ import annotations

import json
import math
import os
import queue
import statistics
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.analysis.checks import metric_value
from tcplab.reproduce import prose, seeds, thresholds
from tcplab.reproduce.catalogue import Claim, Entry
from tcplab.reproduce.judge import Judgement, judge
from tcplab.reproduce.prose import at_point
from tcplab.runs.executors import SharedPool
from tcplab.runs.sweep import load_plan, plan_sweep, run_sweep
from tcplab.specs.load import apply_overrides
from tcplab.storage.files import read_json
from tcplab.storage.ownership import run_problem

VERDICTS = ("agree", "partly", "untestable", "inconclusive", "disagree", "not run")
"""In order from best to worst: over several points the worst decides a claim."""


@dataclass
class Run:
    point: dict[str, Any]
    seed: int
    digest: str
    summary: dict[str, Any]


@dataclass
class ClaimResult:
    entry: Entry
    claim: Claim
    verdict: str
    ours: float = math.nan
    spread: float = math.nan
    target: float = math.nan
    seeds: int = 0
    point: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # over several points: the worst one, which is reported
    ci: float = math.nan  # half-width of the 95 % interval of ours' mean over seeds
    seeds_holding: int = 0  # seeds at which the check holds on its own
    undefined: bool = False  # not run because a value is undefined in our runs
    control: ClaimResult | None = None  # the claim judged on its control's runs
    control_runs: list[Run] = field(default_factory=list)  # those runs (for the prose)
    # ``explain`` and ``open`` with their templates filled from the runs (reproduce/prose.py;
    # set by :func:`fill_prose` once every entry has run)
    explain_text: str = ""
    open_text: str = ""
    # the main check's own outcome (judge.py): "holds", "fails", "inconclusive", "undefined"
    main: str = ""
    # why undecided without noise: "n=1" (one value) or "identical" (every seed the same)
    reason: str = ""
    # ours / the paper's effect, measured from the weaker form's no-effect point (NaN
    # without a weaker form): (ours - n0) / (paper - n0)
    effect: float = math.nan
    direction: str = ""  # the weaker form's own outcome ("" without one)
    quick: bool = False  # judged on --quick's shortened runs: never a decision
    # the paper's own number of repetitions (seeds.PAPER_SEEDS; 0: it states none)
    paper_seeds: int = 0
    # the same check at the claim's ``baseline`` point (plain BBR), when it has one
    baseline: ClaimResult | None = None

    @property
    def short_of_paper(self) -> bool:
        """The label rests on fewer seeds than the paper used (and so is counted apart);
        not when every seed gave the same value (the runs draw no randomness, so more seeds
        would repeat it)."""
        return (
            self.verdict != "not run"
            and self.reason != "identical"
            and 0 < self.seeds < self.paper_seeds
        )

    @property
    def outside_band(self) -> bool:
        """A miss whose direction held but whose effect is outside the effect band."""
        return (
            self.verdict == "disagree" and self.direction == "holds" and not math.isnan(self.effect)
        )

    @property
    def baseline_passes(self) -> bool:
        """The claim holds for the baseline too: it does not tell the algorithms apart."""
        return self.baseline is not None and self.baseline.verdict == "agree"

    def ours_text(self) -> str:
        if self.undefined:
            return "not run: our value is undefined here (no sample to compute it from)"
        if self.verdict == "not run":
            return "not run: " + (self.claim.needs or self.entry.meta.needs)
        tgt = f" (target {_fmt(self.target)})" if self.claim.of else ""
        worst = f"; worst at {self.where}" if self.where else ""
        eff = (
            f"; effect {_fmt(self.effect)}x the paper's"
            if (self.verdict == "partly" or self.outside_band) and not math.isnan(self.effect)
            else ""
        )
        quick = "; quick: shortened runs, not a decision" if self.quick else ""
        if self.baseline is not None and not math.isnan(self.baseline.ours):
            quick += (
                f"; baseline ({_point_text(self.claim.baseline)}) {_fmt(self.baseline.ours)}: "
                + (
                    "passes too, so the check does not tell the algorithms apart"
                    if self.baseline_passes
                    else f"{self.baseline.verdict}"
                )
            )
        if self.reason == "identical":
            return (
                f"{_fmt(self.ours)} in all n={self.seeds} seeds (identical: the runs draw no "
                f"randomness, one value; no decision){tgt}{worst}{quick}"
            )
        if self.seeds < 2 or math.isnan(self.ci):
            return (
                f"{_fmt(self.ours)} (n={self.seeds}, one value: no interval, no decision)"
                f"{tgt}{worst}{quick}"
            )
        seeds = f"n={self.seeds}, check holds in {self.seeds_holding}/{self.seeds} seeds"
        return f"{_fmt(self.ours)} ± {_fmt(self.ci)} (95 % CI; {seeds}){tgt}{worst}{eff}{quick}"

    @property
    def label(self) -> str:
        """The verdict as reported: ``quick`` ones say so, and so does one that rests on
        fewer seeds than the paper used, or that the metric cannot see."""
        word = "untestable with this metric" if self.verdict == "untestable" else self.verdict
        if self.short_of_paper:
            word += f" ({self.seeds} of the paper's {self.paper_seeds} seeds)"
        return f"{word} (quick)" if self.quick and self.verdict != "not run" else word

    def control_text(self) -> str:
        """The control's outcome in words ("" without one): a condition the paper had
        may explain; a diagnostic only shows what moves the number."""
        if self.control is None or self.claim.control is None:
            return ""
        ctl = self.claim.control
        what = ", ".join(f"{k} = {json.dumps(v)}" for k, v in ctl.set.items())
        moved = self.control.verdict != self.verdict
        if self.control.verdict == "not run":
            # No value under the control (e.g. a ratio of two zeros): it decides nothing,
            # so it neither moves the verdict nor leaves it standing.
            return (
                f"{'Control' if ctl.kind == 'condition' else 'Diagnostic'} ({ctl.cause}): "
                f"with {what}, ours {self.control.ours_text()}; the control gives no verdict."
            )
        if ctl.kind == "condition":
            head = f"Control, a condition the paper had ({ctl.cause}; evidence: {ctl.evidence})"
            tail = (
                "the verdict moves with it"
                if moved
                else "the verdict does not move: not this cause alone"
            )
        else:
            head = f"Diagnostic, not the paper's condition ({ctl.cause})"
            tail = (
                "the number moves with it, which shows what it depends on, not the paper's cause"
                if moved
                else "the verdict does not move"
            )
        return (
            f"{head}: with {what}, ours {self.control.ours_text()} -> {self.control.label}; {tail}."
        )

    def check_text(self) -> str:
        c = self.claim
        if c.metric is None:
            return ""
        of = f"range of {c.of} over {c.of_across}" if c.of_across else c.of
        target = f"{c.value:g} x {of}" if c.of else f"{c.value:g}"
        if c.of_at:
            target = f"({target} at " + ", ".join(f"{k} = {v}" for k, v in c.of_at.items()) + ")"
        metric = f"range of {c.metric} over {c.across}" if c.across else c.metric
        main = (
            f"{metric} within {c.tolerance:g} of {target}"
            if c.op == "within"
            else f"{metric} {c.op} {target}"
        )
        at = ", ".join(
            f"{k} = {' / '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in c.at.items()
        )
        return main + (f" at {at}" if at else "")


@dataclass
class EntryResult:
    entry: Entry
    runs: list[Run] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    out: Path | None = None
    cached: int = 0  # runs found complete from an earlier (possibly interrupted) reproduce
    repaired: int = 0  # stored runs found damaged and computed again (counted as computed)
    more_seeds: int = 0  # seeds reached at the undecided claims' points (0: none added)
    control_runs: int = 0  # runs of the claims' controls (apart from ``runs``)
    control_cached: int = 0  # of those, found complete from an earlier reproduce
    seed_cap: int = 0  # the most it could have been (seeds.seed_cap)
    # its plots as PNG bytes, drawn once it is judged (report.draw_plots); None: not yet
    plots: dict[str, bytes] | None = None


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else (f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}")


def _point_text(at: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} = {v}" for k, v in (at or {}).items())


def entry_spec(entry: Entry, quick: bool) -> dict[str, Any]:
    """The raw sweep spec of an entry, shortened by its ``quick`` overrides if asked."""
    raw = dict(entry.raw)
    raw["sweep"] = dict(raw.get("sweep") or {})
    if quick and entry.meta.quick:
        q = dict(entry.meta.quick)
        if "repeat" in q:
            raw["sweep"]["repeat"] = q.pop("repeat")
        raw = apply_overrides(raw, q, "catalogue.quick")
    raw["sweep"].setdefault("repeat", 1)
    return raw


def run_entry(
    entry: Entry,
    out: Path,
    quick: bool,
    workers: int | None,
    executor: str,
    progress: bool = False,
    pool: SharedPool | None = None,
) -> EntryResult:
    """Run (or reuse the cached runs of) one entry into ``out`` and evaluate its claims
    (``pool``: run its sweeps there, see :func:`run_catalogue`)."""
    res = EntryResult(entry, out=out)
    if not entry.runnable:
        res.claims = [ClaimResult(entry, c, "not run") for c in entry.meta.claims]
        return res
    done_before = _finished(out)
    damaged = _damaged(out)
    _entry_sweep(entry, entry_spec(entry, quick), out, workers, executor, progress, pool)
    plan = load_plan(out)
    res.cached = sum(job.digest in done_before for job in plan.jobs)
    res.repaired = sum(job.digest in damaged for job in {j.digest: j for j in plan.jobs}.values())
    _collect(res, plan, out)
    res.claims = [evaluate_claim(entry, c, res.runs) for c in entry.meta.claims]
    if not quick:
        _more_seeds(res, entry, out, workers, executor, progress, pool)
    for k, c in enumerate(res.claims):
        if c.claim.control is not None and c.verdict != "not run":
            c.control, c.control_runs = _run_control(
                res, c.claim, out / f"control-{k + 1}", quick, workers, executor, pool
            )
            c.control.quick = quick
        c.quick = quick
    return res


def _finished(out: Path) -> set[str]:
    """The digests of the runs a sweep directory holds that can be reused as they are
    (storage.ownership.run_problem): a damaged one is computed again by the sweep, so it
    counts as computed, not as cached."""
    return {p.name for p in (out / "runs").glob("[!.]*") if run_problem(p) is None}


def _damaged(out: Path) -> set[str]:
    """The stored runs of a sweep directory that cannot be reused (an edited summary, a
    truncated series): the sweep computes them again, silently in a quiet sweep."""
    runs = out / "runs"
    if not runs.is_dir():
        return set()
    return {p.name for p in runs.glob("[!.]*") if run_problem(p) not in (None, "missing")}


def _entry_sweep(
    entry: Entry,
    raw: dict[str, Any],
    out: Path,
    workers: int | None,
    executor: str,
    progress: bool = False,
    pool: SharedPool | None = None,
) -> None:
    """Run (or reuse) a sweep of ``entry``'s runs into ``out``: the first pass, a
    control's points, or more seeds. Quiet and without the sweep's plots: the entry's
    plots are drawn from the claims (entry_plot.py). Runs keep their tables as Parquet
    only (no CSV copies): nothing of reproduce reads CSV, and a catalogue run's
    series.csv cost about twice its engine time and five times its Parquet's disk
    (benches/RESULTS.md, "Catalogue runs without CSV")."""
    run_sweep(
        raw,
        out,
        workers=workers,
        executor=executor,
        source=str(entry.path),
        quiet=True,
        progress=progress,
        plots=False,
        csv=False,
        pool=pool,
    )


def _run_control(
    res: EntryResult,
    claim: Claim,
    out: Path,
    quick: bool,
    workers: int | None,
    executor: str,
    pool: SharedPool | None = None,
) -> tuple[ClaimResult, list[Run]]:
    """The claim judged on runs of its points (and its reference's) with the control's
    ``set`` applied, as many seeds as the entry's sweep has there; and those runs (the
    prose's ``control:`` templates read them)."""
    entry = res.entry
    raw = entry_spec(entry, quick)
    sub = seeds.restricted(raw, [claim], raw["sweep"]["repeat"])
    assert sub is not None  # the claim's points are in the grid (checked on load)
    sub = apply_overrides(sub, claim.control.set, f"{entry.name}: control")
    before = _finished(out)
    _entry_sweep(entry, sub, out, workers, executor, pool=pool)
    runs = EntryResult(entry)
    plan = load_plan(out)
    _collect(runs, plan, out)
    res.control_runs += len(plan.jobs)
    res.control_cached += sum(job.digest in before for job in plan.jobs)
    return evaluate_claim(entry, claim, runs.runs), runs.runs


def fill_prose(results: list[EntryResult]) -> None:
    """Fill every claim's ``explain``/``open`` templates from the runs of this invocation
    (another entry's templates read its runs when it ran here too)."""
    by_name = {r.entry.name: r for r in results}
    for res in results:
        for c in res.claims:
            c.explain_text = prose.render(c.claim.explain, c, res, by_name)
            c.open_text = prose.render(c.claim.open, c, res, by_name)


def _collect(res: EntryResult, plan: Any, out: Path) -> None:
    """Add a sweep's runs to ``res`` (a run both sweeps hold is counted once)."""
    have = {r.digest for r in res.runs}
    for job in plan.jobs:
        if job.digest in have:
            continue
        summary = read_json(out / "runs" / job.digest / "summary.json")
        res.runs.append(Run(job.point, job.seed, job.digest, summary))


def _more_seeds(
    res: EntryResult,
    entry: Entry,
    out: Path,
    workers: int | None,
    executor: str,
    progress: bool,
    pool: SharedPool | None = None,
) -> None:
    """Raise every judged claim's points to the paper's seed count, then double the seeds
    at the points of inconclusive claims up to the cap, and judge every claim again on all
    runs (reproduce/seeds.py)."""
    raw = entry_spec(entry, False)
    repeat = raw["sweep"]["repeat"]
    res.seed_cap = seeds.seed_cap(entry.meta.paper, entry.meta.max_seeds)
    paper = min(seeds.PAPER_SEEDS.get(entry.meta.paper, 0), res.seed_cap)
    while True:
        # identical seeds would stay identical: more of them decide nothing
        undecided = [
            c.claim for c in res.claims if c.verdict == "inconclusive" and c.reason != "identical"
        ]
        # No label stands on fewer seeds than the paper used (issue 43): every judged claim
        # whose seeds vary gets the paper's count at its points, decided or not.
        short = [
            c.claim
            for c in res.claims
            if c.verdict not in ("not run", "untestable")
            and c.reason != "identical"
            and 0 < c.seeds < paper
        ]
        if short and repeat < paper:
            more = paper
            wanted = short + [c for c in undecided if all(c is not d for d in short)]
        else:
            more = seeds.next_repeat(repeat, res.seed_cap) if undecided else None
            wanted = undecided
        sub = seeds.restricted(raw, wanted, more) if more else None
        if sub is None:
            return
        repeat = more
        digests = [j.digest for j in plan_sweep(sub, str(entry.path)).jobs]
        have = {r.digest for r in res.runs}
        before = _finished(out / seeds.MORE_SEEDS_DIR) | have
        extra = seeds.seed_cache(out, digests)
        _entry_sweep(entry, sub, extra, workers, executor, progress, pool)
        _collect(res, load_plan(extra), extra)
        res.cached += sum(d in before and d not in have for d in digests)
        res.more_seeds = repeat
        res.claims = [evaluate_claim(entry, c, res.runs) for c in entry.meta.claims]


def points(at: dict[str, Any]) -> list[dict[str, Any]]:
    """The grid points a claim's ``at`` names: a list value means every one of its values
    ("at every buffer size"), so ``{"a": [1, 2], "b": 3}`` gives two points."""
    out: list[dict[str, Any]] = [{}]
    for k, v in at.items():
        out = [{**p, k: x} for p in out for x in (v if isinstance(v, list) else [v])]
    return out


def evaluate_claim(entry: Entry, claim: Claim, runs: list[Run]) -> ClaimResult:
    """A claim's verdict from the mean over the seeds of its grid point; over several
    points (a list in ``at``) the worst point decides and is the one reported."""
    if claim.needs:
        return ClaimResult(entry, claim, "not run")
    results = [_evaluate_point(entry, claim, runs, p) for p in points(claim.at)]
    not_run = [r for r in results if r.verdict == "not run"]
    if not_run:
        return not_run[0]  # a point without runs, or with an undefined value (says which)
    worst = max(results, key=lambda r: (VERDICTS.index(r.verdict), _shortfall(claim, r)))
    if len(results) > 1:
        worst.where = ", ".join(
            f"{k} = {v}" for k, v in worst.point.items() if isinstance(claim.at.get(k), list)
        )
    if claim.baseline:
        # The same check with the baseline algorithm at the claim's points (no baseline of
        # its own, so this recursion stops)
        twin = claim.model_copy(update={"at": {**claim.at, **claim.baseline}, "baseline": {}})
        worst.baseline = evaluate_claim(entry, twin, runs)
    return worst


def _shortfall(claim: Claim, r: ClaimResult) -> float:
    """How far a point's value is from its target, in the direction the claim fails."""
    if math.isnan(r.ours) or math.isnan(r.target):
        return math.inf
    if claim.op in (">=", ">"):
        return r.target - r.ours
    if claim.op in ("<=", "<"):
        return r.ours - r.target
    return abs(r.ours - r.target)


def _evaluate_point(
    entry: Entry, claim: Claim, runs: list[Run], point: dict[str, Any]
) -> ClaimResult:
    """Judge a claim at one grid point over its seeds (reproduce/judge.py): agree when
    the check holds beyond the seeds' noise; partly when only its weaker form (the
    direction) does; disagree when the check fails beyond the noise and its weaker form
    too; inconclusive when the seeds cannot decide; not run when a value is undefined."""
    sel = at_point(runs, point)
    if not sel:
        return ClaimResult(entry, claim, "not run")
    if claim.across:
        ours_each = axis_ranges(runs, point, claim.metric, claim.across)
    else:
        ours_each = [metric_value(r.summary, claim.metric) for r in sel]
    main = _judge(
        runs,
        sel,
        point,
        claim.op,
        claim.of,
        claim.of_at,
        claim.value,
        claim.tolerance,
        claim.of_across,
        ours_each,
        claim.metric,
    )
    weaker = None
    w = claim.weaker
    if w is not None:
        weaker = _judge(
            runs,
            sel,
            point,
            w.op,
            w.of if w.of is not None else claim.of,
            w.of_at if w.of_at is not None else claim.of_at,
            w.value,
            w.tolerance,
            claim.of_across if w.of is None else None,
            ours_each,
            claim.metric,
        )
    target, _ = _reference(runs, sel, point, claim.of, claim.of_at, claim.value, claim.of_across)
    spread = (
        statistics.stdev(ours_each)
        if len(ours_each) > 1 and not any(map(math.isnan, ours_each))
        else math.nan
    )
    ours = _mean(ours_each)
    effect = math.nan
    if w is not None:
        # The weaker form's no-effect point in the claim's unit: its value, or its value x
        # its reference (our runs' mean there)
        n0, _ = _reference(
            runs,
            sel,
            point,
            w.of if w.of is not None else claim.of,
            w.of_at if w.of_at is not None else claim.of_at,
            w.value,
            claim.of_across if w.of is None else None,
        )
        if not (math.isnan(n0) or math.isnan(target)) and target != n0:
            effect = (ours - n0) / (target - n0)
    verdict = label(main.outcome, weaker.outcome if weaker is not None else "", effect)
    if claim.untestable and verdict != "not run":
        verdict = "untestable"
    return ClaimResult(
        entry,
        claim,
        verdict,
        ours,
        spread,
        target,
        len(ours_each),
        point=point,
        ci=main.ci,
        seeds_holding=main.seeds_holding,
        undefined=main.outcome == "undefined",
        main=main.outcome,
        reason=main.reason if verdict == "inconclusive" else "",
        effect=effect,
        direction=weaker.outcome if weaker is not None else "",
        paper_seeds=seeds.PAPER_SEEDS.get(entry.meta.paper, 0),
    )


def label(main: str, weaker: str, effect: float) -> str:
    """A claim's verdict from its main check's outcome, its weaker form's ("" without
    one) and ours / the paper's effect (NaN where undefined).

    More seeds come before any label: an undecided main check is inconclusive whatever
    its weaker form says. A decided miss is a miss ("disagree"), whatever the weaker form
    says, unless that form holds and the effect is within ``thresholds.EFFECT_BAND``
    ("partly", direction only); a weaker form that the seeds cannot decide does not make
    a decided miss "inconclusive"."""
    if main == "undefined":
        return "not run"
    if main == "holds":
        return "agree"
    if main == "inconclusive":
        return "inconclusive"
    if weaker == "holds" and (math.isnan(effect) or thresholds.in_effect_band(effect)):
        return "partly"
    return "disagree"


def _judge(
    runs: list[Run],
    sel: list[Run],
    point: dict[str, Any],
    op: str,
    of: str | None,
    of_at: dict[str, Any],
    value: float,
    tolerance: float,
    of_across: str | None,
    ours_each: list[float],
    metric: str | None = None,
) -> Judgement:
    """One comparison over the seeds. A reference measured in the same runs (``of``
    without ``of_at`` or ``of_across``), or at another point with the same seeds, is
    paired seed by seed; otherwise its mean is the target of every seed."""
    n = len(ours_each)
    refs: list[float] | None = None
    if of and not of_across and n == len(sel):
        ref_runs = at_point(runs, {**point, **of_at}) if of_at else sel
        by_seed = {r.seed: metric_value(r.summary, of) for r in ref_runs}
        if sorted(by_seed) == sorted(r.seed for r in sel) and len(by_seed) == n:
            refs = [by_seed[r.seed] for r in sel]
    if refs is None:
        target, ref = _reference(runs, sel, point, of, of_at, value, of_across)
        targets = [target] * n
        refs = [ref] * n if ref is not None else None
    else:
        targets = [value * r for r in refs]
    theta = thresholds.practical(metric, _mean(ours_each), _mean(targets))
    return judge(op, ours_each, targets, tolerance, refs if of else None, theta, _runs_differ(sel))


def _runs_differ(sel: list[Run]) -> bool:
    """Whether the seeds' runs differ anywhere in their summaries (the seed and the
    engine's counters aside): if not, they are one run repeated."""
    docs = {
        json.dumps(
            {k: v for k, v in r.summary.items() if k not in ("seed", "engine")},
            sort_keys=True,
            default=str,
        )
        for r in sel
    }
    return len(docs) > 1


def axis_range(runs: list[Run], point: dict[str, Any], metric: str, axis: str) -> float:
    """How much ``metric`` varies across ``axis``: max - min over the axis values of the
    mean over the seeds, the other axes as ``point`` fixes them (NaN with fewer than two
    values, or an undefined mean)."""
    groups: dict[str, list[float]] = {}
    for r in at_point(runs, {k: v for k, v in point.items() if k != axis}):
        groups.setdefault(str(r.point.get(axis)), []).append(metric_value(r.summary, metric))
    means = [_mean(v) for v in groups.values()]
    return math.nan if len(means) < 2 or any(map(math.isnan, means)) else max(means) - min(means)


def axis_ranges(runs: list[Run], point: dict[str, Any], metric: str, axis: str) -> list[float]:
    """How much ``metric`` varies across ``axis``, one value per seed: max - min over the
    axis values at that seed, for the seeds every axis value has; without two such seeds,
    the one range of the means (:func:`axis_range`), which decides nothing (n = 1)."""
    by_value: dict[str, dict[int, float]] = {}
    for r in at_point(runs, {k: v for k, v in point.items() if k != axis}):
        by_value.setdefault(str(r.point.get(axis)), {})[r.seed] = metric_value(r.summary, metric)
    common = set.intersection(*(set(v) for v in by_value.values())) if by_value else set()
    if len(by_value) < 2 or len(common) < 2:
        return [axis_range(runs, point, metric, axis)]
    return [
        max(v[s] for v in by_value.values()) - min(v[s] for v in by_value.values())
        for s in sorted(common)
    ]


def _reference(
    runs: list[Run],
    sel: list[Run],
    point: dict[str, Any],
    of: str | None,
    of_at: dict[str, Any],
    value: float,
    of_across: str | None = None,
) -> tuple[float, float | None]:
    """The number a claim compares with and the reference it scales (None without
    ``of``): ``value``; or ``value`` x the mean of metric ``of`` over the same runs, or
    over the runs at ``point`` changed by ``of_at``; with ``of_across``, ``value`` x the
    range of ``of`` over that axis there. ``within`` reads its tolerance on the ratio to
    the reference (analysis.checks.compare)."""
    if of and of_across:
        ref = axis_range(runs, {**point, **of_at}, of, of_across)
        return value * ref, ref
    if not of:
        return value, None
    sel_ref = at_point(runs, {**point, **of_at}) if of_at else sel
    ref = _mean([metric_value(r.summary, of) for r in sel_ref]) if sel_ref else math.nan
    return value * ref, ref


def _mean(v: list[float]) -> float:
    return math.nan if not v or any(map(math.isnan, v)) else sum(v) / len(v)


AHEAD = 3
"""Entries in flight at once on a shared pool (:func:`run_catalogue`): while one entry
plans, judges or waits for its last run, the others' runs keep the workers busy."""


def run_catalogue(
    entries: list[Entry],
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    executor: str = "local",
    say=print,
    progress: bool = False,
    after: Callable[[EntryResult], None] | None = None,
) -> list[EntryResult]:
    """Run every entry into ``out/<paper>/<entry>/`` (``progress``: a bar over each
    entry's sweeps, as ``tcplab sweep`` draws; ``after``: called on each entry's result
    once it is judged, in its thread: the report's plots, drawn there while other
    entries' runs keep the workers busy).

    On a local pool of two or more workers, the entries run :data:`AHEAD` at a time, each
    in a thread of its own, their sweeps on one process pool for the whole catalogue
    (runs/executors.py SharedPool): a pool per sweep left the workers idle at each sweep's
    end and between sweeps (benches/RESULTS.md, "Catalogue wall time: idle workers").
    Every entry writes only its own directory and judges only its own runs, and runs
    are content-addressed, so what is stored and judged is the same as one entry after
    another; the results and ``say``'s lines come in the entries' order. A failing entry
    stops the others (its exception goes on, as it would alone); Ctrl-C kills the workers
    at once."""
    n = workers or os.cpu_count() or 1
    if executor != "local" or n < 2 or len(entries) < 2 or any(map(_may_run_real_time, entries)):
        results = []
        for e in entries:
            res, lines = _run_one(e, out, quick, workers, executor, progress, after=after)
            for line in lines:
                say(line)
            results.append(res)
        return results
    with SharedPool(n) as pool:
        return _run_overlapped(entries, out, quick, pool, say, progress, after)


def _run_one(
    e: Entry,
    out: Path,
    quick: bool,
    workers: int | None,
    executor: str,
    progress: bool,
    pool: SharedPool | None = None,
    after: Callable[[EntryResult], None] | None = None,
) -> tuple[EntryResult, list[str]]:
    """One entry run and judged (and ``after`` called on it), and the lines that say so."""
    lines = []
    d = Path(out) / e.meta.paper / e.name
    if not e.runnable:
        lines.append(f"{e.meta.paper} {e.name}: not run ({e.meta.needs})")
    res = run_entry(e, d, quick, workers, executor, progress, pool)
    if after is not None:
        after(res)
    if e.runnable:
        verdicts = ", ".join(c.label for c in res.claims)
        fixed = f", {res.repaired} damaged and computed again" if res.repaired else ""
        lines.append(
            f"{e.meta.paper} {e.name}: {len(res.runs)} runs ({res.cached} cached{fixed}); "
            f"{verdicts or 'no claims'}"
        )
    return res, lines


def _run_overlapped(
    entries: list[Entry],
    out: Path,
    quick: bool,
    pool: SharedPool,
    say: Callable[[str], object],
    progress: bool,
    after: Callable[[EntryResult], None] | None = None,
) -> list[EntryResult]:
    """The entries on ``pool``, each in a daemon thread (one left behind by Ctrl-C fails
    at its next run, the pool being stopped, and never holds up the process's exit),
    :data:`AHEAD` running at any time: when one ends the next starts, even while an
    earlier one still runs (a large entry does not narrow the overlap to itself). Their
    results and lines come in the entries' order: an entry that ended early waits for
    those before it. After a failure no further entry starts; the failure is raised in
    its turn, once the entries before it are reported, as it would be one after another."""
    slots: list[tuple[EntryResult, list[str]] | BaseException | None] = [None] * len(entries)
    done = [threading.Event() for _ in entries]
    ended: queue.SimpleQueue[int] = queue.SimpleQueue()

    def work(i: int) -> None:
        try:
            slots[i] = _run_one(
                entries[i], out, quick, pool.workers, "local", progress, pool, after
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
            slots[i] = exc
        finally:
            done[i].set()
            ended.put(i)

    started = 0

    def start_next() -> None:
        nonlocal started
        if started < len(entries):
            name = f"tcplab-entry-{started}"
            threading.Thread(target=work, args=(started,), name=name, daemon=True).start()
            started += 1

    for _ in range(AHEAD):
        start_next()
    results: list[EntryResult] = []
    failed = False
    try:
        while len(results) < len(entries):
            i = ended.get()
            failed = failed or isinstance(slots[i], BaseException)
            if not failed:
                start_next()
            while len(results) < len(entries) and done[len(results)].is_set():
                got = slots[len(results)]
                if isinstance(got, BaseException):
                    raise got
                assert got is not None
                res, lines = got
                for line in lines:
                    say(line)
                results.append(res)
    except BaseException:
        pool.stop()  # the entries in flight fail at once; none is reported
        raise
    return results


def _may_run_real_time(entry: Entry) -> bool:
    """Whether an entry's runs (its spec, sweep or a control's ``set``) may name a
    backend: a real-time one runs one run at a time (runs/sweep.py), never beside another
    entry's runs, so such a catalogue runs its entries one after another. The shipped
    catalogue names none."""
    sets = [c.control.set for c in entry.meta.claims if c.control is not None]
    return "backend" in json.dumps([entry.raw, sets], default=str)
