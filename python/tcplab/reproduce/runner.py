"""Running the catalogue: each runnable entry as a sweep (cached, resumable, parallel,
through :mod:`tcplab.sweep`), each claim evaluated on the runs at its grid point, with the
mean and spread over seeds, and a verdict.

Verdicts: **agree**, the claim's check holds on the mean over seeds; **partly**, only its
weaker form (the direction) holds; **disagree**, neither; **not run**, its experiment
cannot be built yet (``needs`` says why).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.analysis.checks import compare, metric_value
from tcplab.reproduce.catalogue import Claim, Entry
from tcplab.runs.directory import is_run_dir
from tcplab.runs.sweep import load_plan, run_sweep
from tcplab.spec.model import apply_overrides

VERDICTS = ("agree", "partly", "disagree", "not run")


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

    def ours_text(self) -> str:
        if self.verdict == "not run":
            return "not run: " + (self.claim.needs or self.entry.meta.needs)
        if math.isnan(self.ours):
            return "undefined"
        sd = f" ± {_fmt(self.spread)}" if self.seeds > 1 and not math.isnan(self.spread) else ""
        tgt = f" (target {_fmt(self.target)})" if self.claim.of else ""
        worst = f"; worst at {self.where}" if self.where else ""
        return f"{_fmt(self.ours)}{sd} (n={self.seeds}){tgt}{worst}"

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


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else (f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}")


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
    entry: Entry, out: Path, quick: bool, workers: int | None, executor: str
) -> EntryResult:
    """Run (or reuse the cached runs of) one entry into ``out`` and evaluate its claims."""
    res = EntryResult(entry, out=out)
    if not entry.runnable:
        res.claims = [ClaimResult(entry, c, "not run") for c in entry.meta.claims]
        return res
    done_before = {p.name for p in (out / "runs").glob("[!.]*") if is_run_dir(p)}
    run_sweep(
        entry_spec(entry, quick),
        out,
        workers=workers,
        executor=executor,
        source=str(entry.path),
        quiet=True,
    )
    plan = load_plan(out)
    res.cached = sum(job.digest in done_before for job in plan.jobs)
    for job in plan.jobs:
        summary = json.loads((out / "runs" / job.digest / "summary.json").read_text())
        res.runs.append(Run(job.point, job.seed, job.digest, summary))
    res.claims = [evaluate_claim(entry, c, res.runs) for c in entry.meta.claims]
    return res


def at_point(runs: list[Run], at: dict[str, Any]) -> list[Run]:
    """The runs whose swept values match ``at`` (compared as written in the spec)."""
    return [r for r in runs if all(str(r.point.get(k)) == str(v) for k, v in at.items())]


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
    if any(r.verdict == "not run" for r in results):
        return ClaimResult(entry, claim, "not run")
    worst = max(results, key=lambda r: (VERDICTS.index(r.verdict), _shortfall(claim, r)))
    if len(results) > 1:
        worst.where = ", ".join(
            f"{k} = {v}" for k, v in worst.point.items() if isinstance(claim.at.get(k), list)
        )
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
    sel = at_point(runs, point)
    if not sel:
        return ClaimResult(entry, claim, "not run")
    if claim.across:
        ours, spread = axis_range(runs, point, claim.metric, claim.across), math.nan
    else:
        ours_each = [metric_value(r.summary, claim.metric) for r in sel]
        ours = _mean(ours_each)
        spread = (
            statistics.stdev(ours_each)
            if len(ours_each) > 1 and not any(map(math.isnan, ours_each))
            else math.nan
        )
    target = _reference(runs, sel, point, claim.of, claim.of_at, claim.value, claim.of_across)
    if compare(claim.op, ours, target, claim.tolerance):
        verdict = "agree"
    elif claim.weaker and compare(
        claim.weaker.op,
        ours,
        _reference(
            runs,
            sel,
            point,
            claim.weaker.of if claim.weaker.of is not None else claim.of,
            claim.weaker.of_at if claim.weaker.of_at is not None else claim.of_at,
            claim.weaker.value,
            claim.of_across if claim.weaker.of is None else None,
        ),
        claim.weaker.tolerance,
    ):
        verdict = "partly"
    else:
        verdict = "disagree"
    return ClaimResult(entry, claim, verdict, ours, spread, target, len(sel), point=point)


def axis_range(runs: list[Run], point: dict[str, Any], metric: str, axis: str) -> float:
    """How much ``metric`` varies across ``axis``: max - min over the axis values of the
    mean over the seeds, the other axes as ``point`` fixes them (NaN with fewer than two
    values, or an undefined mean)."""
    groups: dict[str, list[float]] = {}
    for r in at_point(runs, {k: v for k, v in point.items() if k != axis}):
        groups.setdefault(str(r.point.get(axis)), []).append(metric_value(r.summary, metric))
    means = [_mean(v) for v in groups.values()]
    return math.nan if len(means) < 2 or any(map(math.isnan, means)) else max(means) - min(means)


def _reference(
    runs: list[Run],
    sel: list[Run],
    point: dict[str, Any],
    of: str | None,
    of_at: dict[str, Any],
    value: float,
    of_across: str | None = None,
) -> float:
    """The number a claim compares with: ``value``, or ``value`` x the mean of metric ``of``
    over the same runs, or over the runs at ``point`` changed by ``of_at``; with
    ``of_across``, ``value`` x the range of ``of`` over that axis there."""
    if of and of_across:
        return value * axis_range(runs, {**point, **of_at}, of, of_across)
    if not of:
        return value
    ref = at_point(runs, {**point, **of_at}) if of_at else sel
    return value * _mean([metric_value(r.summary, of) for r in ref]) if ref else math.nan


def _mean(v: list[float]) -> float:
    return math.nan if not v or any(map(math.isnan, v)) else sum(v) / len(v)


def run_catalogue(
    entries: list[Entry],
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    executor: str = "local",
    say=print,
) -> list[EntryResult]:
    """Run every entry into ``out/<paper>/<entry>/``."""
    results = []
    for e in entries:
        d = Path(out) / e.meta.paper / e.name
        if not e.runnable:
            say(f"{e.meta.paper} {e.name}: not run ({e.meta.needs})")
        res = run_entry(e, d, quick, workers, executor)
        if e.runnable:
            verdicts = ", ".join(f"{c.verdict}" for c in res.claims)
            say(
                f"{e.meta.paper} {e.name}: {len(res.runs)} runs ({res.cached} cached); {verdicts or 'no claims'}"
            )
        results.append(res)
    return results
