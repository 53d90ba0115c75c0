"""Resolving a spec for the simulator: every default that depends on other fields (the
RTT split, access rates, BDP-relative sizes), before :mod:`.world_config` copies it into
the engine's ``WorldConfig``.

Resolution choices (each documented here because it shapes every result):

* **Per-flow RTT to access delays.** A flow's base RTT is its two-way propagation delay:
  ``rtt = 2 * (sender_access.delay + bottleneck.delay + receiver_access.delay)``. Unless a
  group gives explicit access delays, the whole remainder ``rtt/2 - bottleneck.delay`` is
  put on the receiver's access link and the sender's is 0, as the TUM framework adds its
  per-flow delay on the links towards the receivers (Jaeger et al. 2019, Sec. 3.2). An
  RTT of less than twice the bottleneck delay is an error.
* **Access rate.** Unless given, both access links run at ``ACCESS_RATE_FACTOR`` (100) times
  the highest bottleneck rate of the run (events included), with unlimited buffers: a
  1500-byte packet then takes 1 % of its bottleneck serialisation time on each access
  link, so the bottleneck is the only place a queue forms and the base RTT is what the
  spec says. A smaller factor would let bursts queue at the sender's link; a larger one
  buys nothing, since event count does not depend on rates.
* **BDP-relative sizes.** ``"1.5bdp"`` means ``1.5 * bottleneck.rate * bdp_rtt / 8`` bytes,
  turned into packets of wire size ``mss + header`` (1448 + 52 = 1500 bytes by default)
  and rounded to the nearest packet (at least one packet). ``bdp_rtt`` defaults to the
  smallest flow RTT of the spec and is recorded in the resolved spec.
* **Traces and policers.** A link whose ``rate`` is a trace (:mod:`tcplab.specs.traces`) counts
  as its trace's mean rate wherever one rate stands for it (BDP sizes, default access rate,
  utilisation); the engine gets the trace itself in ``shaping`` under the link's name
  (``bottleneck``, ``bottleneck_reverse``, ``flow<k>.sender_access``,
  ``flow<k>.receiver_access``), with any ``policer`` (burst in packets = packets x
  (mss + header) bytes). The reverse directions of access links run at their forward
  link's (mean) rate, without trace or policer.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tcplab.errors import SpecError
from tcplab.specs.aqm import RedAqm
from tcplab.specs.limits import check_counts, check_resources
from tcplab.specs.model import Flow, Link, Spec
from tcplab.specs.netem import problems
from tcplab.specs.units import Size, format_time
from tcplab.specs.workload import expand

ACCESS_RATE_FACTOR = 100
"""Default access link rate as a multiple of the highest bottleneck rate (see module doc)."""


def _flow_rtt_ns(f: Any, path_delay: int) -> int:
    if f.rtt is not None:
        return f.rtt
    return 2 * (f.access.delay + path_delay + f.receiver_access.delay)


def bdp_rtt_ns(spec: Spec) -> int:
    """The RTT that ``bdp`` refers to: ``bottleneck.bdp_rtt`` or the smallest flow RTT
    (without flows: the smallest source or probe RTT, tcplab.specs.sources)."""
    if spec.bottleneck.bdp_rtt is not None:
        return spec.bottleneck.bdp_rtt
    if not spec.flows:
        others = list(spec.sources) + list(spec.probes)  # (tcplab.specs.probes)
        return min(s.rtt if s.rtt is not None else 2 * spec.bottleneck.delay for s in others)
    return min(_flow_rtt_ns(f, spec.path_delay(f)) for f in spec.flows)


def size_to_packets(size: Size, rate_bps: int, rtt_ns: int, wire_bytes: int) -> int:
    """Packets for a size in packets or BDP multiples (bytes are not converted).

    ``1.5bdp`` at 50 Mbit/s and 10 ms with 1500-byte packets: 1.5 * 50e6 * 0.01 / 8 =
    93 750 bytes = 62.5 packets, rounded half up to 63.
    """
    if size.unit == "pkt":
        return int(size.value)
    if size.unit != "bdp":
        raise ValueError(f"cannot turn {size} into packets")
    bdp_bytes = Decimal(rate_bps) * Decimal(rtt_ns) / Decimal(8 * 10**9)
    pkts = (size.value * bdp_bytes / Decimal(wire_bytes)).quantize(
        Decimal(1), rounding=ROUND_HALF_UP
    )
    return max(1, int(pkts))


def _queue_limit(size: Size) -> dict[str, int] | None:
    if size.unit == "unlimited":
        return None
    if size.unit == "bytes":
        return {"bytes": int(size.value)}
    return {"packets": int(size.value)}


def resolve(spec: Spec) -> Spec:
    """Fill every default that depends on other fields.

    The result has ``bottleneck.bdp_rtt`` set, buffers in packets or bytes, and explicit
    ``access``/``receiver_access`` links (rate and delay) on every flow group. Resolving
    a resolved spec changes nothing.

    Raises
    ------
    SpecError
        Naming the TOML field, e.g. an RTT shorter than twice the bottleneck delay.
    """
    s = spec.model_copy(deep=True)
    # Estimated before expanding anything: a workload's arrivals are drawn one by one.
    if counted := check_counts(s):
        raise SpecError(counted)
    if s.workloads:
        # Poisson arrivals become ordinary flows (tcplab.specs.workload); the resolved spec lists
        # them, and no workloads, so it repeats the run as it is.
        s.flows = s.flows + [Flow.model_validate(f) for f in expand(s)]
        s.workloads = []
        if not s.flows:
            raise SpecError(
                [
                    (
                        "workloads",
                        "no flow arrived in the arrival window; raise rate or load, or widen "
                        "[start, stop)",
                    )
                ]
            )
    b = s.bottleneck
    problems: list[tuple[str, str]] = []
    wire = s.tcp.mss + s.tcp.header
    b.bdp_rtt = bdp_rtt_ns(s)
    top_rate = max(
        [b.rate] + [e.rate for e in s.events if e.rate is not None] + [nl.rate for nl in s.links]
    )
    access_rate = ACCESS_RATE_FACTOR * top_rate
    if b.aqm is not None:
        # The qdisc's hard limit: aqm.limit, else an explicit buffer, else the kernel's
        # default for the qdisc (tcplab.specs.aqm); both given is ambiguous.
        if b.aqm.limit is not None and "buffer" in b.model_fields_set:
            problems.append(
                (
                    "bottleneck.aqm.limit",
                    "the bottleneck's buffer is set too; give the queue limit once "
                    "(aqm.limit or bottleneck.buffer)",
                )
            )
        elif b.aqm.limit is not None:
            b.buffer = b.aqm.limit
        elif "buffer" not in b.model_fields_set and b.aqm.default_limit() is not None:
            b.buffer = b.aqm.default_limit()
        b.aqm = b.aqm.model_copy(update={"limit": None})
    if b.buffer.unit == "bdp":
        b.buffer = Size(Decimal(size_to_packets(b.buffer, b.rate, b.bdp_rtt, wire)), "pkt")
    if isinstance(b.aqm, RedAqm) and b.aqm.min is None and b.aqm.max is None:
        # iproute2 tc/q_red.c (red_parse_opt): without thresholds, max = limit / 4 bytes
        # (Floyd's REDparameters), then min = max / 3 (aqm.engine_config).
        if b.buffer.unit == "unlimited":
            problems.append(
                (
                    "bottleneck.aqm.max",
                    "red without min or max takes tc's default, a quarter of the queue "
                    'limit, and the buffer is unlimited; give max (e.g. max = "0.75bdp") '
                    "or a finite buffer",
                )
            )
        else:
            limit = int(b.buffer.value) * (wire if b.buffer.unit == "pkt" else 1)
            b.aqm = b.aqm.model_copy(update={"max": Size(Decimal(limit // 4), "bytes")})
    if b.reverse is not None and b.reverse.buffer.unit == "bdp":
        rev_rate = b.reverse.rate if b.reverse.rate is not None else b.rate
        b.reverse.buffer = Size(
            Decimal(size_to_packets(b.reverse.buffer, rev_rate, b.bdp_rtt, wire)), "pkt"
        )
    for nl in s.links:
        if nl.buffer.unit == "bdp":
            nl.buffer = Size(Decimal(size_to_packets(nl.buffer, nl.rate, b.bdp_rtt, wire)), "pkt")
        r = nl.reverse
        if r is not None and r.buffer.unit == "bdp":
            r.buffer = Size(
                Decimal(
                    size_to_packets(
                        r.buffer, r.rate if r.rate is not None else nl.rate, b.bdp_rtt, wire
                    )
                ),
                "pkt",
            )
    for i, f in enumerate(s.flows):
        at = f"flows[{i}]"
        pd = s.path_delay(f)
        snd = f.access.model_copy() if f.access else Link()
        rcv = f.receiver_access.model_copy() if f.receiver_access else Link()
        snd.rate = snd.rate if snd.rate is not None else access_rate
        rcv.rate = rcv.rate if rcv.rate is not None else access_rate
        if f.rtt is None:
            f.rtt = 2 * (snd.delay + pd + rcv.delay)  # both given (checked in spec)
        else:
            half = f.rtt // 2
            if f.rtt % 2:
                problems.append(
                    (
                        f"{at}.rtt",
                        f"{f.rtt} ns is odd; an RTT must split into two equal one-way delays",
                    )
                )
            rest = half - pd - (snd.delay or 0) - (rcv.delay or 0)
            fixed = snd.delay is not None and rcv.delay is not None
            if fixed and rest != 0:
                problems.append(
                    (
                        f"{at}.rtt",
                        f"{format_time(f.rtt)} disagrees with the access delays: "
                        f"2 * ({format_time(snd.delay)} + {format_time(pd)} + "
                        f"{format_time(rcv.delay)}) = {format_time(2 * (snd.delay + pd + rcv.delay))}",
                    )
                )
            elif rest < 0:
                floor = 2 * (pd + (snd.delay or 0) + (rcv.delay or 0))
                fixed_links = "the delays of its path's links" if f.path else "bottleneck.delay"
                problems.append(
                    (
                        f"{at}.rtt",
                        f"{format_time(f.rtt)} is shorter than the path's fixed delays; "
                        f"allowed: rtt >= 2 x ({fixed_links} + given access delays) = "
                        f"{format_time(floor)}",
                    )
                )
            elif snd.delay is None and rcv.delay is None:
                snd.delay, rcv.delay = 0, rest
            elif snd.delay is None:
                snd.delay = rest
            elif rcv.delay is None:
                rcv.delay = rest
        for _name, link in (("access", snd), ("receiver_access", rcv)):
            if link.buffer.unit == "bdp":
                link.buffer = Size(
                    Decimal(size_to_packets(link.buffer, link.rate, f.rtt, wire)), "pkt"
                )
        f.access, f.receiver_access = snd, rcv
        if f.stop is None:
            f.stop = s.experiment.duration
    problems += _netem_problems(s)
    if not problems:
        problems = check_resources(s)
    if problems:
        raise SpecError(problems)
    return s


def _netem_problems(s: Spec) -> list[tuple[str, str]]:
    """Jitter and reorder fields of every link, checked once delays are resolved (a
    reordered packet skips its link's delay, so reorder needs one)."""
    b = s.bottleneck
    p = problems("bottleneck", b, b.delay) + problems("bottleneck.reverse", b.reverse, b.delay)
    for i, nl in enumerate(s.links):
        p += problems(f"links[{i}]", nl, nl.delay) + problems(
            f"links[{i}].reverse", nl.reverse, nl.delay
        )
    for i, f in enumerate(s.flows):
        for name in ("access", "receiver_access"):
            link = getattr(f, name)
            p += problems(f"flows[{i}].{name}", link, link.delay if link else None)
    return p
