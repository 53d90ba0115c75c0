"""Jitter and reordering on a link, as netem's ``delay D J [C] distribution DIST`` and
``reorder P [C] gap G`` (Linux net/sched/sch_netem.c, iproute2 tc/q_netem.c); the engine
models them in crates/sim/src/net/netem.rs.

Every field defaults to ``None`` (not set), so that a resolved spec without them lists
none of them; the engine config (:func:`engine_link`) writes their effective defaults,
netem's as the engine's schema gives them: no jitter, uniform distribution, no
correlation, no reordering, gap 1 (tc's default when only a probability is given).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, StrictInt

from tcplab.specs.contract import default
from tcplab.specs.units import format_time, parse_time, probability

Time = Annotated[int, BeforeValidator(parse_time), PlainSerializer(format_time, return_type=str)]
# netem's probabilities and correlations are percentages up to 100 %: a number in [0, 1]
# or, as netem writes them, "25%".
Fraction = Annotated[float, BeforeValidator(probability), Field(ge=0.0, le=1.0)]

DISTRIBUTIONS = ("uniform", "normal", "pareto", "paretonormal")
MAX_JITTER_NS = 2**31 - 1
"""netem's jitter is an s32 of ns (tabledist's sigma); the engine refuses more."""

FIELDS = (
    "jitter",
    "jitter_distribution",
    "jitter_correlation",
    "reorder",
    "reorder_gap",
    "reorder_correlation",
)


class NetemFields(BaseModel):
    """The fields, mixed into every link model (``Link``, ``Bottleneck``, ``NamedLink``)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    jitter: Time | None = None
    jitter_distribution: Literal["uniform", "normal", "pareto", "paretonormal"] | None = None
    jitter_correlation: Fraction | None = None
    reorder: Fraction | None = None
    reorder_gap: Annotated[StrictInt, Field(ge=1)] | None = None
    reorder_correlation: Fraction | None = None


def problems(at: str, link: Any, delay: int | None) -> list[tuple[str, str]]:
    """What is wrong with a link's netem fields, given its (resolved) one-way delay."""
    p: list[tuple[str, str]] = []
    if link is None:
        return p
    jitter = link.jitter or 0
    if jitter > MAX_JITTER_NS:
        p.append(
            (
                f"{at}.jitter",
                f"{format_time(jitter)} is more than netem's largest jitter, 2147483647 ns "
                "(an s32 of ns)",
            )
        )
    if link.jitter_distribution is not None and jitter == 0:
        # tc/q_netem.c: "distribution specified but no latency and jitter values".
        p.append((f"{at}.jitter_distribution", "needs a jitter > 0 (as tc's netem)"))
    if link.jitter_correlation and jitter == 0:
        p.append((f"{at}.jitter_correlation", "needs a jitter > 0"))
    reorder = link.reorder or 0.0
    if reorder > 0 and not delay:
        # tc/q_netem.c: "reordering not possible without specifying some delay".
        p.append(
            (
                f"{at}.reorder",
                "needs a delay > 0: a reordered packet skips the link's delay (as tc's netem)",
            )
        )
    for name in ("reorder_gap", "reorder_correlation"):
        if getattr(link, name) is not None and reorder == 0:
            p.append((f"{at}.{name}", "needs reorder > 0"))
    return p


def engine_link(
    rate_bps: int,
    delay_ns: int,
    buffer: dict[str, int] | None = None,
    loss: float = 0.0,
    link: Any = None,
    aqm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An engine ``LinkConfig`` (crates/sim/src/config.rs), whole: every key, with this
    module's fields from ``link`` (a spec link) where set and the engine's defaults (its
    exported schema, tcplab.specs.contract: netem's, above) where not or without a link;
    ``buffer`` None is unlimited, ``aqm`` None drop-tail."""
    out: dict[str, Any] = {
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "buffer": buffer,
        "loss": loss,
        "aqm": aqm,
    }
    for name in FIELDS:
        key = "jitter_ns" if name == "jitter" else name
        v = getattr(link, name) if link is not None else None
        out[key] = default("LinkConfig", key) if v is None else v
    out["jitter_ns"] = int(out["jitter_ns"])
    return out
