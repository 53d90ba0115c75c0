"""``[bottleneck] aqm``: the bottleneck's queue discipline, one table per kind, each with
Linux's defaults (the engine models them: crates/sim/src/net/aqm/).

``kind`` selects the model; every other field is optional::

    aqm = { kind = "codel", target = "5ms", interval = "100ms", ecn = true }

The qdisc's hard limit is ``limit`` if given, else ``bottleneck.buffer`` if the spec sets
it, else the kernel's default (codel and pie: 1000 packets, fq_codel: 10240 packets;
red and step have none, so the bottleneck's default buffer of 1 BDP applies).
"""

from __future__ import annotations

import typing
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StrictInt,
    model_validator,
)

from tcplab.specs.contract import default, definition, spec_name
from tcplab.specs.units import Size, format_time, parse_size, parse_time


def _engine_default(kind: str, field: str):
    """The engine's default of a qdisc parameter (crates/sim/src/net/aqm/, where each
    names its kernel source): one place for each default."""
    return default("AqmConfig", field, kind)


Time = Annotated[int, BeforeValidator(parse_time), PlainSerializer(format_time, return_type=str)]
SizeField = Annotated[Size, BeforeValidator(parse_size), PlainSerializer(str, return_type=str)]


class _Aqm(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    @model_validator(mode="after")
    def _target_below_interval(self) -> _Aqm:
        target, interval = getattr(self, "target", None), getattr(self, "interval", None)
        if target is not None and interval is not None and target >= interval:
            raise ValueError(
                f"target ({format_time(target)}) must be below interval ({format_time(interval)})"
            )
        return self

    # The qdisc's hard limit (packets, bytes or BDP multiples); see the module docs.
    limit: SizeField | None = None

    def default_limit(self) -> Size | None:
        """The kernel's default limit, if the qdisc has one."""
        return None


class StepAqm(_Aqm):
    """Mark (drop without ``ecn``) an arrival that finds ``k`` or more packets queued (DCTCP's K)."""

    kind: Literal["step"]
    k: StrictInt = Field(ge=1, le=1_000_000)
    ecn: StrictBool = False


class RedAqm(_Aqm):
    """RED (sch_red.c); ``min``/``max`` thresholds on the average queue, defaulted as
    ``tc`` (iproute2 tc/q_red.c, red_parse_opt) does: max = 3 min, min = max / 3, and with
    neither, max = a quarter of the queue limit (resolved with the buffer, backends/sim/
    resolve.py)."""

    kind: Literal["red"]
    min: SizeField | None = None
    max: SizeField | None = None
    probability: float = Field(_engine_default("red", "max_p"), gt=0.0, le=1.0)
    avpkt: StrictInt = Field(_engine_default("red", "avpkt_bytes"), ge=1, le=65_535)
    burst: StrictInt | None = Field(None, ge=1)  # packets; tc: (2 min + max) / (3 avpkt)
    ecn: StrictBool = False
    harddrop: StrictBool = False


class CodelAqm(_Aqm):
    """CoDel (sch_codel.c): target 5 ms, interval 100 ms, limit 1000 packets."""

    kind: Literal["codel"]
    target: Time = _engine_default("codel", "target_ns")
    interval: Time = _engine_default("codel", "interval_ns")
    ecn: StrictBool = _engine_default("codel", "ecn")

    def default_limit(self) -> Size | None:
        return Size(Decimal(1000), "pkt")  # sch_codel.c: sch->limit = DEFAULT_CODEL_LIMIT


class FqCodelAqm(_Aqm):
    """FQ-CoDel (sch_fq_codel.c): 1024 flow queues, quantum 1514 B, ECN on, limit 10240."""

    kind: Literal["fq_codel"]
    target: Time = _engine_default("fq_codel", "target_ns")
    interval: Time = _engine_default("fq_codel", "interval_ns")
    quantum: StrictInt = Field(_engine_default("fq_codel", "quantum_bytes"), ge=64, le=1_048_576)
    flows: StrictInt = Field(_engine_default("fq_codel", "flows"), ge=1, le=65_536)
    ecn: StrictBool = _engine_default("fq_codel", "ecn")

    def default_limit(self) -> Size | None:
        return Size(Decimal(10240), "pkt")  # fq_codel_init: sch->limit = 10*1024


class PieAqm(_Aqm):
    """PIE (sch_pie.c): target 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16, limit 1000."""

    kind: Literal["pie"]
    target: Time = _engine_default("pie", "target_ns")
    tupdate: Time = _engine_default("pie", "tupdate_ns")
    alpha: StrictInt = Field(_engine_default("pie", "alpha"), ge=0, le=32)
    beta: StrictInt = Field(_engine_default("pie", "beta"), ge=0, le=32)
    ecn: StrictBool = _engine_default("pie", "ecn")

    def default_limit(self) -> Size | None:
        return Size(Decimal(1000), "pkt")  # pie_init: sch->limit = 1000


_MODELS = (StepAqm, RedAqm, CodelAqm, FqCodelAqm, PieAqm)
Aqm = Annotated[typing.Union[_MODELS], Field(discriminator="kind")]  # noqa: UP007
_BY_KIND = {typing.get_args(m.model_fields["kind"].annotation)[0]: m for m in _MODELS}
KINDS = tuple(_BY_KIND)
"""The ``kind`` names, as the models declare them."""


def _bytes(size: Size, wire: int, bdp_bytes: float) -> int:
    if size.unit == "bytes":
        return int(size.value)
    if size.unit == "pkt":
        return int(size.value) * wire
    if size.unit == "bdp":
        return max(1, int(round(float(size.value) * bdp_bytes)))
    raise ValueError(f"{size} is not a size")


def engine_config(aqm: Any, wire: int, bdp_bytes: float) -> dict[str, Any]:
    """The engine's ``aqm`` table (crates/sim/src/net/aqm/mod.rs, ``AqmConfig``)."""
    if isinstance(aqm, RedAqm):
        qmax = _bytes(aqm.max, wire, bdp_bytes) if aqm.max is not None else None
        qmin = _bytes(aqm.min, wire, bdp_bytes) if aqm.min is not None else None
        # tc/q_red.c: max defaults to 3 min, min to max / 3 (neither: resolve.py sets max).
        if qmax is None and qmin is not None:
            qmax = 3 * qmin
        if qmin is None and qmax is not None:
            qmin = qmax // 3
        return {
            "kind": "red",
            "min_bytes": qmin,
            "max_bytes": qmax,
            "max_p": aqm.probability,
            "avpkt_bytes": aqm.avpkt,
            "ecn": aqm.ecn,
            "harddrop": aqm.harddrop,
            "burst_pkts": aqm.burst,  # null: the engine's (2 min + max) / (3 avpkt)
        }
    if isinstance(aqm, _MODELS):
        # The others' settings are the engine's fields under the spec's names (target_ns
        # is `target`, quantum_bytes `quantum`): read the table off the engine's schema,
        # so a new qdisc of that kind is its model and its place in _MODELS.
        props = definition("AqmConfig", aqm.kind)["properties"]
        return {f: aqm.kind if f == "kind" else getattr(aqm, spec_name(f)) for f in props}
    raise TypeError(f"unknown aqm {aqm!r}")


def model_of(kind: str) -> Any:
    """The model class of an aqm ``kind`` (for error messages)."""
    return _BY_KIND.get(kind)
