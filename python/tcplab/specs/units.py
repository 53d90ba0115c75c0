"""Units, parsed once.

Every quantity in a spec is a string with a unit: rates (``"10Mbps"``, ``"500kbps"``),
times (``"40ms"``, ``"2.5s"``) and sizes (``"100pkt"``, ``"150KiB"``, ``"1.5bdp"``). They are
parsed here with exact decimal arithmetic into the integer base units the engine takes
(bit/s, ns, bytes, packets), so that no float rounding creeps into a configuration.
Rate prefixes are SI (k = 1000); sizes in bytes are ``B`` or binary ``KiB``/``MiB``/``GiB``
(``KB``, ``MB``, ``GB`` in any case are refused as ambiguous: AMBIGUOUS_SIZE). Every parser
raises ``ValueError`` with a message saying what is allowed; the caller adds the field path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

_NUMBER = r"(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_PATTERN = re.compile(r"^\s*" + _NUMBER + r"\s*(?P<unit>[A-Za-z/]*)\s*$")

RATE_UNITS: dict[str, int] = {
    # Bits per second, spelt with exactly this case: "bps" spellings are where bits and
    # bytes get confused (tc(8), "RATES", reads kbps, mbps, gbps as *bytes* per second;
    # "MBps" is megabytes by most conventions), so only the papers' own forms are taken
    # and every other case of them is refused as ambiguous (AMBIGUOUS_RATE below).
    "bps": 1,
    "kbps": 10**3,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    # Tbit/s: the largest rate a spec can state is 1000Tbps (MAX_RATE_BPS); the engine's
    # own limit on a link is lower and said by tcplab.specs.limits (check_rates).
    "Tbps": 10**12,
}
RATE_UNITS_ANY_CASE: dict[str, int] = {
    "bit/s": 1,
    "kbit/s": 10**3,
    "mbit/s": 10**6,
    "gbit/s": 10**9,
    # tc's spellings (tc(8), "RATES"): bit, kbit, mbit, gbit, tbit, all bits per second
    # with SI prefixes, whatever their case.
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "tbit": 10**12,
}
AMBIGUOUS_RATE = re.compile(r"^[kKmMgGtT]?[bB][pP][sS]$")
"""Any other case of a ``bps`` spelling (``mbps``, ``MBps``, ``GBPS``, ``kBps``): tc reads
lowercase ``mbps`` as megabytes per second and ``MBps`` means megabytes to most readers,
while a paper's Mbps is megabits; an 8x error either way, so it is refused, not guessed."""
TIME_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    # tc's spellings (tc(8), "TIMES")
    "usec": 10**3,
    "msec": 10**6,
    "sec": 10**9,
}
BYTE_UNITS: dict[str, int] = {
    "b": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}
AMBIGUOUS_SIZE: dict[str, tuple[int, int]] = {
    # tc(8), "SIZES", reads kb, mb, gb in any case (and k, m, g) as 1024-based bytes
    # (tc/tc_util.c get_size); SI and most papers read kB, MB, GB as 1000-based. A 2.4 %
    # (k) to 7.4 % (G) difference in a buffer moves results, so neither is guessed:
    # prefix -> (tc's bytes, SI's bytes).
    "kb": (2**10, 10**3),
    "mb": (2**20, 10**6),
    "gb": (2**30, 10**9),
}
PACKET_UNITS = ("pkt", "pkts", "packet", "packets")

Scalar = str | int | float

MAX_EXPONENT = 30
"""Numbers of 10**31 or more are refused before any arithmetic (``"1e999999s"`` would
overflow Decimal's context, a 5000-digit one Python's int conversion)."""
MAX_RATE_BPS = 10**15
"""1 Pbit/s: above any link the engine can simulate (the bottleneck is capped far lower
by tcplab.specs.limits; this bounds explicit access links so they fit the engine's u64)."""
MAX_TIME_NS = 2**63 - 1
"""Times are u64 nanoseconds in the engine; 2**63 ns is 292 years."""
MAX_BYTES = 2**53
"""Sizes in bytes (9 PB): a finite transfer's byte count stays exact in every unit."""
MAX_PACKETS = 2**40
"""Sizes in packets (1.1e12; times a 65 000-byte MSS still below 2**63 bytes)."""
MAX_BDP = 10**6
"""Sizes in BDP multiples."""


def _split(text: Scalar, what: str, example: str) -> tuple[Decimal, str]:
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"{text!r} has no unit; write the {what} as a string such as '{example}'")
    m = _PATTERN.match(text)
    if not m:
        raise ValueError(f"cannot parse {text!r} as a {what}; write e.g. '{example}'")
    try:
        value = Decimal(m.group("num"))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"cannot parse {text!r} as a {what}") from exc
    if value.adjusted() > MAX_EXPONENT:
        raise ValueError(f"{text[:40]!r}{'...' if len(text) > 40 else ''} is too large a {what}")
    unit = m.group("unit")
    if not unit:
        raise ValueError(f"{text!r} has no unit; write the {what} as e.g. '{example}'")
    return value, unit


def real_number(v: object) -> float:
    """A TOML number for a float field: an int or a float, not a bool or a string
    (pydantic's lax mode would turn ``true`` into 1.0 and ``"0.1"`` into 0.1)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"must be a number, got {type(v).__name__} {v!r}")
    return float(v)


_PERCENT = re.compile(r"^\s*" + _NUMBER + r"\s*%\s*$")


def probability(v: object) -> float:
    """A probability: a TOML number (``0.01``) or netem's percentage (``"1%"``, as in
    ``tc qdisc ... netem loss 1%``), which is not ambiguous. The range is the field's."""
    if isinstance(v, str):
        m = _PERCENT.match(v)
        if m is None:
            raise ValueError(
                f"must be a number such as 0.01 or a percentage such as '1%', got {v!r}"
            )
        value = Decimal(m.group("num"))
        if value.adjusted() > MAX_EXPONENT:
            raise ValueError(f"{v[:40]!r} is not a probability")
        return float(value / 100)
    return real_number(v)


def _whole(value: Decimal, text: str, base: str) -> int:
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of {base}")
    return int(value)


ALLOWED_RATE_UNITS = (
    "bps, kbps, Mbps, Gbps, Tbps (this case exactly) or tc's bit, kbit, mbit, gbit, tbit (any case)"
)


def parse_rate(text: Scalar) -> int:
    """Parse a rate into bit/s.

    Parameters
    ----------
    text : str
        A number and one of ``bps, kbps, Mbps, Gbps, Tbps`` (bits per second, this case
        exactly: other cases such as ``mbps`` or ``MBps`` are refused as ambiguous) or
        ``bit/s, kbit/s, ..., bit, kbit, mbit, gbit, tbit`` (any case), e.g. ``"10Mbps"``.

    Returns
    -------
    int
        The rate in bit/s, > 0.
    """
    value, unit = _split(text, "rate", "10Mbps")
    scale = RATE_UNITS.get(unit, RATE_UNITS_ANY_CASE.get(unit.lower()))
    if scale is None and AMBIGUOUS_RATE.match(unit):
        prefix = unit[:-3].lower()
        name = {"": "", "k": "kilo", "m": "mega", "g": "giga", "t": "tera"}[prefix]
        paper = ("k" if prefix == "k" else prefix.upper()) + "bps"
        raise ValueError(
            f"ambiguous rate unit '{unit}' in {text!r}: tc reads '{unit.lower()}' as "
            f"{name}bytes per second and most readers a capital B as bytes, while a paper's "
            f"'{paper}' is {name}bits: an 8x difference; write bits per second as "
            f"{ALLOWED_RATE_UNITS}"
        )
    if scale is None:
        raise ValueError(f"unknown rate unit '{unit}' in {text!r}; allowed: {ALLOWED_RATE_UNITS}")
    bps = _whole(value * scale, text, "bit/s")
    if bps <= 0:
        raise ValueError(f"rate must be > 0, got {text!r}")
    if bps > MAX_RATE_BPS:
        raise ValueError(f"{text!r} is above the largest rate, 1000000Gbps (1 Pbit/s)")
    return bps


def parse_time(text: Scalar) -> int:
    """Parse a duration or instant into nanoseconds.

    Parameters
    ----------
    text : str
        A number and one of ``ns, us, ms, s, min``, e.g. ``"2.5s"``.

    Returns
    -------
    int
        Nanoseconds, >= 0.
    """
    value, unit = _split(text, "time", "40ms")
    scale = TIME_UNITS.get(unit)
    if scale is None:
        raise ValueError(
            f"unknown time unit '{unit}' in {text!r}; allowed: ns, us, ms, s, min (also tc's usec, msec, sec)"
        )
    ns = _whole(value * scale, text, "nanoseconds")
    if ns < 0:
        raise ValueError(f"time must be >= 0, got {text!r}")
    if ns > MAX_TIME_NS:
        raise ValueError(f"{text!r} is longer than the longest time, 2**63 ns (292 years)")
    return ns


@dataclass(frozen=True)
class Size:
    """A queue or data size before resolution: packets, bytes, or a multiple of the BDP.

    ``unit == "unlimited"`` means no limit (``value`` is then 0).
    """

    value: Decimal
    unit: Literal["pkt", "bytes", "bdp", "unlimited"]

    def __str__(self) -> str:
        if self.unit == "unlimited":
            return "unlimited"
        if self.unit == "bytes":
            return f"{self.value}B"
        return f"{self.value}{self.unit}"


ALLOWED_SIZE_UNITS = "pkt, B, KiB, MiB, GiB (1024-based), bdp, or 'unlimited'"


def parse_size(text: Scalar) -> Size:
    """Parse a size: ``"100pkt"``, ``"150000B"``, ``"64KiB"``, ``"1.5bdp"`` or ``"unlimited"``.

    Packet and byte counts must be whole numbers; every size must be > 0 (a zero buffer
    would drop every packet, which is never what an experiment means). ``KB``, ``MB`` and
    ``GB`` (any case) are refused, saying both readings (AMBIGUOUS_SIZE).
    """
    if isinstance(text, str) and text.strip().lower() in ("unlimited", "inf", "infinite"):
        return Size(Decimal(0), "unlimited")
    value, unit = _split(text, "size", "100pkt' or '1.5bdp")
    u = unit.lower()
    if u in PACKET_UNITS:
        size = Size(Decimal(_whole(value, text, "packets")), "pkt")
    elif u == "bdp":
        size = Size(value, "bdp")
    elif u in BYTE_UNITS:
        size = Size(Decimal(_whole(value * BYTE_UNITS[u], text, "bytes")), "bytes")
    elif u in AMBIGUOUS_SIZE:
        tc, si = AMBIGUOUS_SIZE[u]
        binary = unit[0].upper() + "iB"
        number = _PATTERN.match(str(text)).group("num")  # type: ignore[union-attr]
        raise ValueError(
            f"ambiguous size unit '{unit}' in {text!r}: tc reads it as {_trim(value * tc)} "
            f"bytes (1024-based), SI as {_trim(value * si)} (1000-based); write "
            f"'{number}{binary}' for tc's or '{_trim(value * si)}B' for SI's "
            f"(allowed: {ALLOWED_SIZE_UNITS})"
        )
    else:
        raise ValueError(f"unknown size unit '{unit}' in {text!r}; allowed: {ALLOWED_SIZE_UNITS}")
    if size.value <= 0:
        raise ValueError(f"size must be > 0, got {text!r}")
    top = {
        "pkt": (MAX_PACKETS, "2**40 packets"),
        "bytes": (MAX_BYTES, "2**53 bytes"),
        "bdp": (MAX_BDP, "1000000bdp"),
    }
    limit, spelled = top[size.unit]
    if size.value > limit:
        raise ValueError(f"{text!r} is above the largest size, {spelled}")
    return size


def format_rate(bps: int) -> str:
    """The shortest exact spelling of a rate: ``50_000_000 -> "50Mbps"``, ``1_500_000 -> "1.5Mbps"``."""
    for name, scale in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps >= scale and bps % (scale // 1000) == 0:
            return f"{_trim(Decimal(bps) / scale)}{name}"
    return f"{bps}bps"


def format_time(ns: int) -> str:
    """The shortest exact spelling of a time: ``2_500_000_000 -> "2.5s"``, ``40_000_000 -> "40ms"``."""
    if ns == 0:
        return "0s"
    for name, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale and ns % (scale // 1000) == 0:
            return f"{_trim(Decimal(ns) / scale)}{name}"
    return f"{ns}ns"


def _trim(d: Decimal) -> str:
    s = format(d, "f")
    return s.rstrip("0").rstrip(".") if "." in s else s
