"""Judging one comparison over seeds: does ``ours op target`` hold, fail, or can the
seeds not tell?

Each seed gives a *margin*, positive where the comparison holds at that seed:
``ours - target`` for ``>=``/``>``, ``target - ours`` for ``<=``/``<``, and for
``within`` the distance to the edge of the tolerance band. When the reference metric
(``of``) is measured in the same runs, ours and the reference are paired seed by seed
(the margin of seed k uses seed k's reference), so a seed where the claim reverses counts
as one. The verdict reads a 95 % confidence interval of the mean (Student's t over the
seeds):

* **holds** when the whole interval is on the passing side,
* **fails** when the whole interval is on the failing side,
* **inconclusive** when it straddles the edge: the difference is within the noise of
  the seeds, and more seeds (or a longer run) are needed to decide.

**Practical significance** (``thresholds.py``): a one-sided check is read against a band
of +- theta around its edge, theta the metric's smallest difference that matters. "More"
(``>``) holds only when the interval lies beyond +theta and fails once it lies within it
(the two are the same: a decided null effect); "at least" (``>=``) holds while the
interval stays above -theta and fails below it. So a 0.06 % difference is "the same", not
a decision either way, and a null effect measured at 30 seeds is decided, not
"inconclusive".

**No decision from nothing.** One value (n = 1) decides nothing: the comparison is
inconclusive (``reason`` "n=1"), and the catalogue gives it more seeds. Seeds whose values
are all identical because the runs are (runs that draw no randomness: before 0.6.0's
start-up variation, one flow, CUBIC only, no random loss) are one value repeated, not a
sample: inconclusive too (``reason`` "identical"), and more seeds would repeat it, so
none are added. Runs that differ but agree on the value (a link kept busy in every seed)
decide it: a zero-width interval.

``within`` uses the interval rule on ``ours - target`` (or, with ``of``, on the ratio
``ours / ref``) against the band ``[-tolerance, +tolerance]``: inside as a whole holds,
outside as a whole fails (its tolerance is its practical band). Any undefined value (NaN:
no sample, a zero reference for a ratio) makes the comparison undefined, which the
catalogue reports as *not run* with that reason.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from scipy.stats import t as student_t

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Judgement:
    """A comparison judged over seeds."""

    outcome: str  # "holds", "fails", "inconclusive" or "undefined"
    mean: float  # mean of ours over the seeds
    ci: float  # half-width of the 95 % interval of ours' mean (NaN with one seed)
    seeds: int
    seeds_holding: int  # seeds at which the comparison holds on its own
    reason: str = ""  # why undecided without noise: "n=1" or "identical" (else "")


def half_width(values: list[float]) -> float:
    """Half-width of the 95 % Student-t confidence interval of the mean (NaN for n < 2)."""
    n = len(values)
    if n < 2:
        return math.nan
    return float(student_t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * statistics.stdev(values) / n**0.5


def judge(
    op: str,
    ours: list[float],
    targets: list[float],
    tolerance: float = 0.0,
    refs: list[float] | None = None,
    threshold: float = 0.0,
    runs_differ: bool = False,
) -> Judgement:
    """Judge ``ours[k] op targets[k]`` over the seeds k (``targets`` is one value per
    seed: the same value repeated when the target does not vary by seed). ``refs``: the
    reference metric per seed, for ``within`` on a ratio (``targets[k]`` is then
    ``value x refs[k]``). ``threshold``: theta, the practical-significance band of a
    one-sided check (module doc). ``runs_differ``: the seeds' runs are not copies of
    one another (their summaries differ), so values that are nevertheless all the same
    (a saturated link's utilisation) are a decided value, not one value repeated."""
    n = len(ours)
    values = ours + targets + (refs or [])
    if n == 0 or len(targets) != n or any(math.isnan(v) for v in values):
        return Judgement("undefined", math.nan, math.nan, n, 0)
    if op == "within" and refs is not None and any(r == 0 for r in refs):
        return Judgement("undefined", math.nan, math.nan, n, 0)  # no ratio to a zero
    mean = statistics.fmean(ours)
    ci = half_width(ours)
    reason = ""
    if n == 1:
        reason = "n=1"
    elif len(set(ours)) == 1 and len(set(targets)) == 1 and not runs_differ:
        reason = "identical"
    if op == "within":
        # Distance from the target in the tolerance's unit (ratio points with a ref).
        d = [
            (o - t) / abs(r) if refs is not None else o - t
            for o, t, r in zip(ours, targets, refs or [1.0] * n)
        ]
        holding = sum(abs(x) <= tolerance for x in d)
        if reason:
            return Judgement("inconclusive", mean, ci, n, holding, reason)
        lo, hi = _interval(d)
        if -tolerance <= lo and hi <= tolerance:
            return Judgement("holds", mean, ci, n, holding)
        if hi < -tolerance or lo > tolerance:
            return Judgement("fails", mean, ci, n, holding)
        return Judgement("inconclusive", mean, ci, n, holding)
    sign = 1.0 if op in (">=", ">") else -1.0
    margins = [sign * (o - t) for o, t in zip(ours, targets)]
    strict = op in (">", "<")
    # the edge: beyond +theta for "more", not below -theta for "at least"
    edge = threshold if strict else -threshold
    holding = sum((m > edge) if strict else (m >= edge) for m in margins)
    if reason:
        return Judgement("inconclusive", mean, ci, n, holding, reason)
    lo, hi = _interval(margins)
    if (lo > edge) if strict else (lo >= edge):
        return Judgement("holds", mean, ci, n, holding)
    if (hi <= edge) if strict else (hi < edge):
        return Judgement("fails", mean, ci, n, holding)
    return Judgement("inconclusive", mean, ci, n, holding)


def _interval(values: list[float]) -> tuple[float, float]:
    """The 95 % interval of the mean of ``values``; a point with one value."""
    m = statistics.fmean(values)
    h = half_width(values)
    return (m, m) if math.isnan(h) else (m - h, m + h)
