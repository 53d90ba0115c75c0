"""``[[probes]]``: latency-under-load probes, ping beside the bulk flows (Flent's RRUL).

Model (the engine's, crates/sim/src/probe.rs): a probe sends one packet of ``size`` wire
bytes (IP total length) every ``interval`` from ``start`` while before ``stop`` (default:
the end of the run), over its own access links and the bottleneck; the receiving host
echoes each at once with a packet of the same size (as the kernel answers an ICMP echo
request: no timer, no TCP). The probe's RTT is the echo's arrival minus the request's send
time, what ping prints as ``time=``. Both packets share the queues with the flows, so
they see the standing queue and can be dropped (drop-tail, loss, AQM: probes are not
ECN-capable, as ping's packets are not); a probe whose request or echo is dropped is
lost and counted. ``rtt`` is the path's base RTT as a flow's (default ``2 x
bottleneck.delay``), the one-way delay beyond the bottleneck's on the receiver access
link. Dumbbell only (no ``[[links]]``/``path``). On the kernel backend the probe is
iputils ``ping`` from the sender's namespace (backends/kernel/ping.py).

Defaults, from the test they stand for:

- ``interval = "200ms"``: Flent's RRUL runs ``ping`` with its step size as the interval
  (flent/tests/rrul.conf, "Ping (ms) ICMP": ``find_ping(IP_VERSION, STEP_SIZE, ...)``),
  and Flent's default step size is 0.2 s (flent/settings.py, ``-s/--step-size``).
- ``size = "84B"``: iputils ping's default packet, 56 data bytes + the 8-byte ICMP header
  + the 20-byte IPv4 header (ping(8), ``-s packetsize``: "The default is 56, which
  translates into 64 ICMP data bytes when combined with the 8 bytes of ICMP header").

Outputs: ``probes.parquet`` / ``probes.csv`` (one row per echo: ``probe``, ``name``,
``seq``, ``time_s`` of the request, ``rtt_ms``) and, in summary.json, ``probes``: per
probe ``name``, ``interval_ms``, ``size_bytes``, ``count`` (sent), ``echoed``, ``lost``
(dropped), ``in_flight_at_end``, ``loss_rate`` (lost / sent) and the RTT's ``min_ms``,
``median_ms``, ``p95_ms``, ``p99_ms``, ``max_ms`` (numpy's linear percentiles; null
without an echo).
"""

from __future__ import annotations

import re
from typing import Any

from tcplab.specs.netem import engine_link
from tcplab.specs.sources import path_and_window

DEFAULT_INTERVAL_NS = 200_000_000  # Flent's default STEP_SIZE, 0.2 s (see the module doc)
DEFAULT_SIZE_BYTES = 84  # iputils ping's default: 56 + 8 (ICMP) + 20 (IPv4)
# The smallest probe: an IPv4 header and an ICMP echo header with no data (ping -s 0).
MIN_SIZE_BYTES = 28
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def names(spec: Any) -> list[str]:
    """Each probe's name: its own, else ``probe<i>``."""
    return [p.name if p.name is not None else f"probe{i}" for i, p in enumerate(spec.probes)]


def check(spec: Any) -> list[tuple[str, str]]:
    """Problems of ``spec.probes`` as (field, message)."""
    p: list[tuple[str, str]] = []
    if spec.probes and (spec.links or any(f.path for f in spec.flows)):
        p.append(("probes", "probes run on the dumbbell only (no [[links]] or flow paths)"))
    if spec.probes and spec.experiment.pcap:
        p.append(
            (
                "experiment.pcap",
                "not with [[probes]]: pcap.py writes no ICMP frames yet; leave out pcap or probes",
            )
        )
    dur = spec.experiment.duration
    floor = 2 * spec.bottleneck.delay
    seen: set[str] = set()
    for i, (s, name) in enumerate(zip(spec.probes, names(spec))):
        at = f"probes[{i}]"
        if s.name is not None and not _NAME.fullmatch(s.name):
            p.append((f"{at}.name", "1 to 40 of A-Z a-z 0-9 _ . - (e.g. 'ping')"))
        if name in seen:
            p.append((f"{at}.name", f"'{name}' names two probes; give each its own"))
        seen.add(name)
        if s.interval <= 0:
            p.append((f"{at}.interval", "must be > 0 (e.g. '200ms', Flent's step)"))
        elif s.interval < 1_000_000:
            p.append((f"{at}.interval", "at least 1ms (a probe measures; [[sources]] load)"))
        if s.size.unit != "bytes" or not MIN_SIZE_BYTES <= s.size.value <= 65_535:
            p.append((f"{at}.size", f"a size in bytes in [{MIN_SIZE_BYTES}, 65535] (e.g. '84B')"))
        p += path_and_window(at, s, floor, dur)
    return p


def engine_config(spec: Any, access_rate: int) -> list[dict[str, Any]]:
    """The engine's ``probes`` (crates/sim/src/config.rs ProbeConfig) of a resolved spec."""
    out = []
    b = spec.bottleneck
    for s in spec.probes:
        rtt = s.rtt if s.rtt is not None else 2 * b.delay
        out.append(
            {
                "interval_ns": int(s.interval),
                "packet_bytes": int(s.size.value),
                "sender_access": engine_link(int(access_rate), 0),
                "receiver_access": engine_link(int(access_rate), int(rtt // 2 - b.delay)),
                "start_ns": int(s.start),
                "stop_ns": int(s.stop if s.stop is not None else spec.experiment.duration),
            }
        )
    return out


def _percentile(sorted_vals: list[float], q: float) -> float:
    """numpy's default (linear) percentile of sorted values."""
    pos = (len(sorted_vals) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def rtt_stats(rtt_ms: list[float]) -> dict[str, float | None]:
    """min, median, p95, p99 and max of the RTTs (ms), linear percentiles as numpy's
    default; None without a value."""
    keys = ("min_ms", "median_ms", "p95_ms", "p99_ms", "max_ms")
    if not rtt_ms:
        return dict.fromkeys(keys)
    a = sorted(rtt_ms)
    vals = [a[0], _percentile(a, 50), _percentile(a, 95), _percentile(a, 99), a[-1]]
    return dict(zip(keys, vals))


def summary(raw: list[dict[str, Any]], probe_names: list[str]) -> list[dict[str, Any]]:
    """Per-probe entries of summary.json (see the module doc)."""
    out = []
    for i, c in enumerate(raw):
        sent = int(c["sent_packets"])
        rtts = [ns / 1e6 for ns in c.get("rtt_ns", [])]
        out.append(
            {
                "probe": i,
                "name": probe_names[i] if i < len(probe_names) else f"probe{i}",
                "interval_ms": int(c["interval_ns"]) / 1e6,
                "size_bytes": int(c["packet_bytes"]),
                "count": sent,
                "echoed": int(c["echoed_packets"]),
                "lost": int(c["dropped_packets"]),
                "in_flight_at_end": int(c["in_flight_packets_at_end"]),
                "loss_rate": int(c["dropped_packets"]) / sent if sent else None,
                **rtt_stats(rtts),
            }
        )
    return out
