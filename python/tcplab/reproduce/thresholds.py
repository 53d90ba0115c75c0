"""Practical significance: per metric, the difference below which two values are the same.

A comparison over seeds can be decided far below any difference that matters: with
identical runs (no randomness drawn) the interval has no width, so 0.9364 against 0.9370
was "beyond the noise". The judge (``judge.py``) therefore reads every one-sided check
against a band of +- theta around its edge, theta being the larger of an absolute floor
and a fraction of the compared values' magnitude:

======================================  ==========  =========  ================================
metric (``window.`` / ``windows.W.``    absolute    relative   why
prefixes and ``[selector]`` ignored)
======================================  ==========  =========  ================================
``jain_index``, ``jain_index_mean``,    0.01        --         one point of the index (Jain
``f_avg``                                                      1984: 0.5-1 for two flows)
``share``, ``share_minus_fair_share``   0.01        --         one percent of the link
``utilization``                         0.01        --         one percent of the link
``retransmitted_packets``               1 packet    5 %        a count's run-to-run jitter
``retransmission_rate``                 1e-4        5 %        likewise, as a rate
``*_backlog_pkts``, ``*_cwnd_pkts``,    1 packet    2 %        one packet of queue or window
``*_inflight_pkts``
``*_ms`` (RTTs, RTprop estimates)       0.5 ms      2 %        below the 1 ms timer tick
``*_bps`` (rates, estimates)            --          1 %        one percent of the rate
``*_s`` (times, durations)              0.01 s      5 %        ten milliseconds, or 5 %
other ratios (``*_mean``)               0.01        1 %        one percent
======================================  ==========  =========  ================================

The choices are the catalogue's, documented here and in the catalogue's README; none is
tuned to a result. ``within`` checks carry their own band (the claim's ``tolerance``, the
paper's "about"), so theta does not widen them.

**The effect band of "direction only".** A claim whose main check fails but whose weaker
form holds is labelled "partly" (direction only) only while ours is within
:data:`EFFECT_BAND` of the paper's effect, both measured from the weaker form's
no-effect point: (ours - n0) / (paper - n0) between 0.5 and 2. Outside it the effect is
not the paper's (a tenth of it, or three times it), and the label is "not reproduced",
with the factor. Why 0.5x-2x: a factor of two either way is the widest reading of "the
same effect, smaller or larger" that still orders it with the paper's (half the paper's
reduction is still a reduction of the paper's kind; a tenth is not), and it is symmetric
on a log scale; it is the catalogue's choice, stated here, not fitted to any claim.
"""

from __future__ import annotations

import re

# (pattern on the base metric name, absolute floor, relative fraction)
RULES: list[tuple[str, float, float]] = [
    (r"jain_index(_mean)?|f_avg", 0.01, 0.0),
    (r"share|share_minus_fair_share", 0.01, 0.0),
    (r"utilization", 0.01, 0.0),
    (r"retransmitted_packets", 1.0, 0.05),
    (r"retransmission_rate", 1e-4, 0.05),
    (r".*_(backlog|cwnd|inflight)_pkts", 1.0, 0.02),
    (r".*_ms", 0.5, 0.02),
    (r".*_bps", 0.0, 0.01),
    (r".*_s", 0.01, 0.05),
]
DEFAULT = (0.01, 0.01)
"""Any other metric (dimensionless ratios such as ``bdp_overestimation_mean``)."""

EFFECT_BAND = (0.5, 2.0)
"""ours / the paper's effect within which a held direction reads "direction only"."""


def in_effect_band(effect: float) -> bool:
    """Whether ``effect`` (ours / the paper's, from the no-effect point) is within
    :data:`EFFECT_BAND`."""
    lo, hi = EFFECT_BAND
    return lo <= effect <= hi


_PREFIX = re.compile(r"^(window\.|windows\.[A-Za-z0-9_-]+\.)")
_SELECTOR = re.compile(r"\[.*?\]")


def base_name(metric: str) -> str:
    """``windows.back.utilization[flow0]`` -> ``utilization``."""
    return _SELECTOR.sub("", _PREFIX.sub("", metric.strip()))


def rule(metric: str) -> tuple[float, float]:
    """The metric's (absolute floor, relative fraction)."""
    name = base_name(metric)
    for pattern, absolute, relative in RULES:
        if re.fullmatch(pattern, name):
            return absolute, relative
    return DEFAULT


def practical(metric: str | None, *values: float) -> float:
    """theta for ``metric`` when comparing ``values`` (the mean of ours and the target):
    the larger of the absolute floor and the relative fraction of the largest magnitude.
    0 without a metric."""
    if not metric:
        return 0.0
    absolute, relative = rule(metric)
    finite = [abs(v) for v in values if v == v and abs(v) != float("inf")]
    return max(absolute, relative * max(finite, default=0.0))
