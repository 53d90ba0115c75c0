"""The Rust simulator backend: resolve a :class:`~tcplab.spec.Spec` into the engine's
``WorldConfig`` (``crates/sim/src/config.rs``: integers in ns, bit/s, bytes, packets) and
run it.

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
* **Traces and policers.** A link whose ``rate`` is a trace (:mod:`tcplab.traces`) counts
  as its trace's mean rate wherever one rate stands for it (BDP sizes, default access rate,
  utilisation); the engine gets the trace itself in ``shaping`` under the link's name
  (``bottleneck``, ``bottleneck_reverse``, ``flow<k>.sender_access``,
  ``flow<k>.receiver_access``), with any ``policer`` (burst in packets = packets x
  (mss + header) bytes). The reverse directions of access links run at their forward
  link's (mean) rate, without trace or policer.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..aqm import engine_config as aqm_engine_config
from ..errors import EngineError, SpecError
from ..limits import check_resources
from ..spec import Link, Spec
from ..units import Size, format_time

ACCESS_RATE_FACTOR = 100
"""Default access link rate as a multiple of the highest bottleneck rate (see module doc)."""


def engine() -> Any:
    """The compiled engine module ``tcplab._engine``.

    Raises
    ------
    RuntimeError
        If the extension is not built.
    """
    try:
        from .. import _engine  # type: ignore[attr-defined]
    except ImportError as exc:  # pragma: no cover - depends on the build
        raise RuntimeError(
            "the tcplab engine (tcplab._engine) is not built; install tcplab with 'pip install .' "
            f"from the repository root ({exc})"
        ) from None
    return _engine


def _flow_rtt_ns(f: Any, path_delay: int) -> int:
    if f.rtt is not None:
        return f.rtt
    return 2 * (f.access.delay + path_delay + f.receiver_access.delay)


def bdp_rtt_ns(spec: Spec) -> int:
    """The RTT that ``bdp`` refers to: ``bottleneck.bdp_rtt`` or the smallest flow RTT
    (without flows: the smallest source RTT, tcplab.sources)."""
    if spec.bottleneck.bdp_rtt is not None:
        return spec.bottleneck.bdp_rtt
    if not spec.flows:
        return min(s.rtt if s.rtt is not None else 2 * spec.bottleneck.delay for s in spec.sources)
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
    if s.workloads:
        # Poisson arrivals become ordinary flows (tcplab.workload); the resolved spec lists
        # them, and no workloads, so it repeats the run as it is.
        from ..spec import Flow
        from ..workload import expand

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
        # default for the qdisc (tcplab.aqm); both given is ambiguous.
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
    if not problems:
        problems = check_resources(s)
    if problems:
        raise SpecError(problems)
    return s


def _link(rate: int, delay: int, buffer: Size, loss: float) -> dict[str, Any]:
    return {
        "rate_bps": int(rate),
        "delay_ns": int(delay),
        "buffer": _queue_limit(buffer),
        "loss": float(loss),
    }


def _shaping(rate: Any, policer: Any, wire: int) -> dict[str, Any] | None:
    """The engine's ``Shaping`` of a link (net/shaping.rs), or None."""
    from ..traces import TraceRate

    out: dict[str, Any] = {}
    if isinstance(rate, TraceRate):
        out["trace"] = rate.engine_config()
    if policer is not None:
        burst = int(policer.burst.value) * (wire if policer.burst.unit == "pkt" else 1)
        out["policer"] = {"rate_bps": int(policer.rate), "burst_bytes": burst}
    return out or None


def world_config(spec: Spec, seed: int | None = None) -> dict[str, Any]:
    """The engine's ``WorldConfig`` for a spec (resolved here if it is not yet).

    Flow groups are expanded: flow ``k`` of a group starts at ``start + k * stagger``.
    """
    s = resolve(spec)
    b = s.bottleneck
    wire = s.tcp.mss + s.tcp.header
    shaping: dict[str, Any] = {}
    for name, rate, pol in (
        ("bottleneck", b.rate, b.policer),
        (
            "bottleneck_reverse",
            b.reverse.rate if b.reverse else None,
            b.reverse.policer if b.reverse else None,
        ),
    ):
        if (sh := _shaping(rate, pol, wire)) is not None:
            shaping[name] = sh
    flows = []
    for f in s.flows:
        for k in range(f.count):
            for end, link in (("sender_access", f.access), ("receiver_access", f.receiver_access)):
                if (sh := _shaping(link.rate, link.policer, wire)) is not None:
                    shaping[f"flow{len(flows)}.{end}"] = sh
            app: Any = "bulk"
            if f.size is not None:
                nbytes = int(f.size.value) * (s.tcp.mss if f.size.unit == "pkt" else 1)
                app = {"finite": {"bytes": nbytes}}
            snd, rcv = f.access, f.receiver_access
            flows.append(
                {
                    "cc": f.cc,
                    "params": dict(f.params),
                    "sender_access": _link(snd.rate, snd.delay, snd.buffer, snd.loss),
                    "receiver_access": _link(rcv.rate, rcv.delay, rcv.buffer, rcv.loss),
                    "start_ns": int(f.start + k * f.stagger),
                    "stop_ns": int(f.stop),
                    "app": app,
                }
            )
            if (
                f.ecn is not None
            ):  # absent unless set: configs (and digests) of older specs stay as they were
                flows[-1]["ecn"] = f.ecn
            if f.onoff is not None:  # likewise
                from ..sources import onoff_config

                flows[-1]["onoff"] = onoff_config(f.onoff)
    config: dict[str, Any] = {
        "duration_ns": int(s.experiment.duration),
        "seed": int(s.experiment.seed if seed is None else seed),
        "sample_interval_ns": int(s.experiment.sample_interval),
        "tcp": {
            "mss_bytes": s.tcp.mss,
            "header_bytes": s.tcp.header,
            "delayed_ack": s.tcp.delayed_ack,
            "initial_cwnd": s.tcp.initial_cwnd,
            "rack": s.tcp.rack,
            "sack_compression": s.tcp.sack_compression,
            "rto_min_ns": int(s.tcp.rto_min),
            "tlp": s.tcp.tlp,
        },
        "bottleneck": _link(b.rate, b.delay, b.buffer, b.loss),
        "flows": flows,
        "events": [
            {"at_ns": int(e.at), "rate_bps": e.rate, "delay_ns": e.delay, "loss": e.loss}
            for e in s.events
        ],
    }
    # ECN and AQM keys only when used, so configs of specs without them are unchanged.
    if s.tcp.ecn:
        config["tcp"]["ecn"] = True
    if s.tcp.receive_buffer != "linux":
        config["tcp"]["receive_buffer"] = s.tcp.receive_buffer
    if s.tcp.rcv_truesize is not None:
        config["tcp"]["rcv_truesize"] = s.tcp.rcv_truesize
    if b.aqm is not None:
        wire = s.tcp.mss + s.tcp.header
        config["bottleneck"]["aqm"] = aqm_engine_config(b.aqm, wire, b.rate * b.bdp_rtt / 8e9)
    # Only when used, so that existing specs keep their engine config and run digests.
    if b.reverse is not None:
        r = b.reverse
        config["bottleneck_reverse"] = _link(
            r.rate if r.rate is not None else b.rate, b.delay, r.buffer, r.loss
        )
    if shaping:
        config["shaping"] = shaping
    if s.experiment.pcap:
        config["capture"] = list(s.experiment.pcap)
    if s.links:
        config["links"] = []
        for nl in s.links:
            r = nl.reverse
            config["links"].append(
                {
                    "name": nl.name,
                    "forward": _link(nl.rate, nl.delay, nl.buffer, nl.loss),
                    "reverse": _link(
                        r.rate if r.rate is not None else nl.rate, nl.delay, r.buffer, r.loss
                    )
                    if r
                    else None,
                }
            )
            for name, rate, pol in (
                (nl.name, nl.rate, nl.policer),
                (f"{nl.name}_reverse", r.rate if r else None, r.policer if r else None),
            ):
                if (sh := _shaping(rate, pol, wire)) is not None:
                    shaping[name] = sh
        if shaping:
            config["shaping"] = shaping
    if s.sources:  # only when used, so other specs keep their engine config
        from ..sources import engine_config as sources_config

        top_rate = max([b.rate] + [e.rate for e in s.events if e.rate is not None])
        config["sources"] = sources_config(s, ACCESS_RATE_FACTOR * top_rate)
    if any(f.path for f in s.flows):
        config["paths"] = [list(f.path or ["bottleneck"]) for f in s.flows for _ in range(f.count)]
    return config


def config_json(config: dict[str, Any]) -> str:
    """Canonical JSON of a config (sorted keys, no spaces): the basis of run digests."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def run_config(
    config: dict[str, Any], progress: Callable[[float], None] | None = None
) -> dict[str, Any]:
    """Run the engine on a ``WorldConfig``; return its raw result dictionary.

    Raises
    ------
    SpecError
        If the engine rejects the config (its message names the config field).
    EngineError
        If the engine fails internally; no Rust panic reaches the caller.
    """
    eng = engine()
    text = config_json(config)
    try:
        return eng.run(text, progress) if progress is not None else eng.run(text)
    except ValueError as exc:
        raise SpecError([("engine config", str(exc))]) from None
    except BaseException as exc:  # PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise EngineError(f"the simulator failed: {type(exc).__name__}: {exc}") from None


@functools.lru_cache(maxsize=1)
def engine_schema() -> dict[str, Any]:
    """The engine's contract as JSON Schema: ``{"world_config", "run_output"}``, exported
    from the Rust types (``crates/sim/src/schema.rs``)."""
    return json.loads(engine().schema())


_UNIT_SUFFIX = re.compile(r"_(ns|bps|bytes|pkts)$")
_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)")


def _deref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _property(node: dict[str, Any], name: str, defs: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of field ``name`` of an object (or of an Option / tagged enum of them)."""
    node = _deref(node, defs)
    if name in node.get("properties", {}):
        return node["properties"][name]
    for alt in node.get("anyOf", []) + node.get("oneOf", []):
        if (found := _property(alt, name, defs)) is not None:
            return found
    return None


def _item(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    node = _deref(node, defs)
    if "items" in node:
        return node["items"]
    for alt in node.get("anyOf", []):
        if _deref(alt, defs).get("type") == "array":
            return _deref(alt, defs)["items"]
    return {}


def spec_field(config_field: str, spec: Spec) -> str:
    """The spec path of an engine config field: ``flows[3].sender_access.rate_bps`` ->
    ``flows[1].access.rate`` (flow 3 belongs to group 1), ``duration_ns`` ->
    ``experiment.duration``.

    The names come from the engine's schema: a field's ``x-spec`` where it has one, else
    its name without the unit suffix. Expanded flows and sources map back to the group
    that produced them: that is the one step the schema cannot know.
    """
    root = engine_schema()["world_config"]
    defs = root.get("$defs", {})
    node: dict[str, Any] = root
    out: list[str] = []
    for part in config_field.split("."):
        m = _SEGMENT.fullmatch(part)
        if m is None:
            return config_field
        name, indices = m.group(1), [int(i) for i in re.findall(r"\d+", m.group(2))]
        prop = _property(node, name, defs)
        spec_name = (prop or {}).get("x-spec") or _UNIT_SUFFIX.sub("", name)
        if name in ("flows", "sources") and not out and indices:
            k, group = indices[0], 0
            for g, f in enumerate(spec.flows if name == "flows" else spec.sources):
                if k < f.count:
                    group = g
                    break
                k -= f.count
            indices[0] = group
        out.append(spec_name + "".join(f"[{i}]" for i in indices))
        node = prop or {}
        for _ in indices:
            node = _item(node, defs)
    return ".".join(out)


def check_with_engine(spec: Spec) -> dict[str, Any]:
    """Resolve ``spec``, let the engine validate its config, and return the config.

    Raises
    ------
    SpecError
        With the engine's complaint attributed to the spec field it came from.
    """
    resolved = resolve(spec)
    config = world_config(resolved)
    try:
        engine().validate(config_json(config))
    except ValueError as exc:
        field, _, msg = str(exc).partition(": ")
        raise SpecError([(spec_field(field, resolved), msg or str(exc))]) from None
    return config
