"""``[[sources]]``: constant-rate UDP-like sources, optionally on/off.

Model (the engine's, crates/sim/src/source.rs): a source sends packets of ``packet`` wire
bytes (default 1500) at ``rate`` from ``start`` to ``stop`` (default: the end of the run)
over its own access links and the bottleneck; no congestion control, no retransmission,
no ACKs; the receiving host counts what arrives. Its packets queue and are dropped at the
bottleneck like any packet. ``rtt`` is its path's base RTT as for a flow (default
``2 x bottleneck.delay``): the one-way delay beyond the bottleneck's goes on its receiver
access link; both access links run at the flows' default access rate with unlimited
buffers. ``onoff = { on = "2s", off = "1s", dist = "exponential" }`` alternates on and off
periods starting with an on period, of fixed lengths or exponential with those means,
drawn from the engine's RNG stream ``source/<i>/onoff`` (so a spec and seed give the same
periods). Sources run on the dumbbell only (no ``[[links]]``/``path``).

The summary lists them under ``sources``, apart from the TCP flows: per source
``rate_bps``, ``packet_bytes``, ``sent_packets``, ``received_packets``, ``dropped_packets``,
``in_flight_packets_at_end``, ``delivered_bps`` (received wire bits / duration),
``loss_rate`` (dropped / sent) and ``on_fraction`` (on time / [start, stop)). TCP flows'
metrics, shares, Jain's index and ``utilization`` are unchanged in meaning: utilization
counts TCP goodput only.

On/off TCP flows: ``onoff`` (same form) on a ``[[flows]]`` group: each flow's application
writes only in on periods, from the flow's start (RNG stream ``onoff/flow<k>``); what was
sent is still retransmitted while off. A flow resumes with the cwnd it had: the engine
does not model Linux's idle restart (``tcp_cwnd_restart``, RFC 2861, with
``tcp_slow_start_after_idle = 1``, the default), so it behaves as Linux with
``net.ipv4.tcp_slow_start_after_idle = 0`` (crates/sim/src/world/onoff.rs).
"""

from __future__ import annotations

from typing import Any

from tcplab.specs.netem import engine_link
from tcplab.specs.units import format_time


def check(spec: Any) -> list[tuple[str, str]]:
    """Problems of ``spec.sources`` as (field, message)."""
    p: list[tuple[str, str]] = []
    if spec.sources and (spec.links or any(f.path for f in spec.flows)):
        p.append(("sources", "sources run on the dumbbell only (no [[links]] or flow paths)"))
    dur = spec.experiment.duration
    floor = 2 * spec.bottleneck.delay
    for i, s in enumerate(spec.sources):
        at = f"sources[{i}]"
        if s.rate <= 0:
            p.append((f"{at}.rate", "must be > 0"))
        if s.packet.unit != "bytes" or not 1 <= s.packet.value <= 65_535:
            p.append((f"{at}.packet", "a size in bytes in [1, 65535] (e.g. '1500B')"))
        p += path_and_window(at, s, floor, dur)
        if s.onoff is not None:
            p += check_onoff(at, s.onoff)
    for i, f in enumerate(spec.flows):
        if f.onoff is not None:
            p += check_onoff(f"flows[{i}]", f.onoff)
    return p


def onoff_config(o: Any) -> dict[str, Any]:
    """The engine's ``OnOffConfig`` of an ``onoff`` table."""
    return {"on_ns": int(o.on), "off_ns": int(o.off), "exponential": o.dist == "exponential"}


def check_onoff(at: str, o: Any) -> list[tuple[str, str]]:
    return [
        (f"{at}.onoff.{k}", "must be > 0 (e.g. '1s')") for k in ("on", "off") if getattr(o, k) <= 0
    ]


def engine_config(spec: Any, access_rate: int) -> list[dict[str, Any]]:
    """The engine's ``sources`` (crates/sim/src/config.rs SourceConfig) of a resolved spec."""
    out = []
    b = spec.bottleneck
    for s in spec.sources:
        rtt = s.rtt if s.rtt is not None else 2 * b.delay
        for _ in range(s.count):
            c: dict[str, Any] = {
                "rate_bps": int(s.rate),
                "packet_bytes": int(s.packet.value),
                "sender_access": engine_link(int(access_rate), 0),
                "receiver_access": engine_link(int(access_rate), int(rtt // 2 - b.delay)),
                "start_ns": int(s.start),
                "stop_ns": int(s.stop if s.stop is not None else spec.experiment.duration),
                "onoff": onoff_config(s.onoff) if s.onoff is not None else None,
            }
            out.append(c)
    return out


def summary(raw_sources: list[dict[str, Any]], duration_s: float) -> list[dict[str, Any]]:
    """Per-source entries of summary.json (see the module doc)."""
    out = []
    for i, c in enumerate(raw_sources):
        span = max(1, int(c["stop_ns"]) - int(c["start_ns"]))
        sent = int(c["sent_packets"])
        out.append(
            {
                "source": i,
                "rate_bps": int(c["rate_bps"]),
                "packet_bytes": int(c["packet_bytes"]),
                "sent_packets": sent,
                "received_packets": int(c["received_packets"]),
                "dropped_packets": int(c["dropped_packets"]),
                "in_flight_packets_at_end": int(c["in_flight_packets_at_end"]),
                "delivered_bps": int(c["received_bytes"]) * 8 / duration_s,
                "loss_rate": int(c["dropped_packets"]) / sent if sent else None,
                "on_fraction": int(c["on_ns"]) / span,
            }
        )
    return out


def path_and_window(at: str, s: Any, floor: int, dur: int) -> list[tuple[str, str]]:
    """What a source and a probe share (problems as (field, message) under ``at``): an
    ``rtt`` of at least 2 x bottleneck.delay (``floor``) that splits into two equal
    one-way delays, and a window ``0 <= start < stop <= experiment.duration`` (``dur``)."""
    p: list[tuple[str, str]] = []
    if s.rtt is not None and s.rtt < floor:
        p.append(
            (
                f"{at}.rtt",
                f"{format_time(s.rtt)} is shorter than 2 x bottleneck.delay ({format_time(floor)})",
            )
        )
    elif s.rtt is not None and s.rtt % 2:
        p.append(
            (f"{at}.rtt", f"{s.rtt} ns is odd; an RTT must split into two equal one-way delays")
        )
    stop = s.stop if s.stop is not None else dur
    if not 0 <= s.start < stop <= dur:
        p.append(
            (
                f"{at}.stop",
                f"need 0 <= start < stop <= experiment.duration ({format_time(dur)})",
            )
        )
    return p
