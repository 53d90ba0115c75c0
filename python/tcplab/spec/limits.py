"""What the engine supports and what a run may cost, checked before anything runs.

A spec that would stall, overflow or exhaust memory is refused with the estimate and the
limit in the message (issue 12), rather than found out after minutes or gigabytes.

- **Packet rate.** BBR keeps its bandwidth in a 32-bit word of packets per microsecond
  shifted left by ``BW_SCALE`` = 24 (net/ipv4/tcp_bbr.c, as ours does), so it cannot
  represent more than 2**32 / 2**24 = 256 packets/us: 2.97 Tbit/s of 1448-byte segments.
  tcplab refuses bottleneck rates above that for every algorithm: one limit for the
  engine, not one per algorithm.
- **Memory.** A run holds every packet in flight or queued (measured: 1 s of one BBR flow
  at 1000 Gbit/s, 40 ms, 1 BDP buffer, holds 5.0 M packets at its peak in 1.98 GB of
  resident memory, about 400 bytes a packet) and every series row until it is written
  (issue 12: 2 M rows of a two-flow run at a 1 us interval peaked at 4.7 GB, about 2.4 KB
  a row through the engine's columns, the DataFrame and the CSV writer).
- **Series rows** are also capped on their own, since they are written to disk twice.
- **Sweep runs** are counted before the grid is expanded.
"""

from __future__ import annotations

import math
import os
from typing import Any

MAX_PACKETS_PER_SECOND = 256_000_000
"""2**32 >> BW_SCALE packets per microsecond: BBR's bandwidth word (see module doc)."""

MAX_SERIES_ROWS = 2_000_000
"""Per-flow plus queue series rows of one run (about 4.8 GB at BYTES_PER_SERIES_ROW)."""

MAX_SWEEP_RUNS = 100_000
"""Runs of one sweep (grid points x repeat)."""

BYTES_PER_PACKET_HELD = 400
BYTES_PER_SERIES_ROW = 2_400

MEMORY_LIMIT_ENV = "TCPLAB_MEMORY_LIMIT_GB"
DEFAULT_MEMORY_LIMIT_GB = 8.0


def memory_limit_bytes() -> int:
    """The memory a run may be estimated to need: ``$TCPLAB_MEMORY_LIMIT_GB`` or 8 GB."""
    text = os.environ.get(MEMORY_LIMIT_ENV)
    try:
        gb = float(text) if text else DEFAULT_MEMORY_LIMIT_GB
    except ValueError:
        gb = DEFAULT_MEMORY_LIMIT_GB
    return int(gb * 1e9) if math.isfinite(gb) and gb > 0 else int(DEFAULT_MEMORY_LIMIT_GB * 1e9)


def series_rows(spec: Any) -> int:
    """Rows of series.csv plus queue.csv: one per flow and one per queue each interval."""
    samples = -(-spec.experiment.duration // spec.experiment.sample_interval) + 1
    return samples * (spec.flow_count() + 1)


def packets_held(spec: Any) -> int:
    """Packets the bottleneck path can hold at once: the largest flow (or source) RTT's worth of the
    fastest bottleneck rate in flight, plus a full bottleneck buffer (a resolved spec:
    buffers in packets or bytes; an unlimited buffer adds nothing we could bound)."""
    wire = spec.tcp.mss + spec.tcp.header
    top_rate = max([spec.bottleneck.rate] + [e.rate for e in spec.events if e.rate is not None])
    b = spec.bottleneck
    max_rtt = max(
        [f.rtt for f in spec.flows]
        + [s.rtt if s.rtt is not None else 2 * b.delay for s in spec.sources]
    )
    pipe = top_rate * max_rtt // (8 * wire * 10**9)
    buf = spec.bottleneck.buffer
    queued = (
        int(buf.value)
        if buf.unit == "pkt"
        else int(buf.value) // wire
        if buf.unit == "bytes"
        else 0
    )
    return pipe + queued


def check_rates(spec: Any) -> list[tuple[str, str]]:
    """Bottleneck and event rates within the engine's packet rate (an unresolved spec will do)."""
    wire = spec.tcp.mss + spec.tcp.header
    limit_bps = MAX_PACKETS_PER_SECOND * wire * 8
    out = []
    # Every link and source, not only the bottleneck (issue 21: a [[links]] or [[sources]]
    # rate of 1 Pbit/s was accepted, and a [[links]] rate above 10 Tbit/s gave access
    # links 100 times faster, beyond the largest rate a spec can state).
    rates = (
        [("bottleneck.rate", spec.bottleneck.rate)]
        + [(f"events[{i}].rate", e.rate) for i, e in enumerate(spec.events) if e.rate is not None]
        + [(f"links[{i}].rate", ln.rate) for i, ln in enumerate(spec.links)]
        + [(f"sources[{i}].rate", src.rate) for i, src in enumerate(spec.sources)]
    )
    for field, rate in rates:
        if isinstance(rate, (int, float)) and rate > limit_bps:
            out.append(
                (
                    field,
                    f"{rate / 1e12:.4g} Tbit/s is above the engine's limit of "
                    f"{MAX_PACKETS_PER_SECOND // 10**6} packets/us x {wire} B = {limit_bps / 1e12:.4g} Tbit/s "
                    "(BBR's bandwidth word, tcp_bbr.c BW_SCALE)",
                )
            )
    return out


def check_resources(spec: Any) -> list[tuple[str, str]]:
    """Series rows and estimated peak memory of a resolved spec within their limits."""
    out = []
    rows = series_rows(spec)
    if rows > MAX_SERIES_ROWS:
        out.append(
            (
                "experiment.sample_interval",
                f"the run would record {rows:,} series rows (duration / sample_interval x (flows + 1)); "
                f"the limit is {MAX_SERIES_ROWS:,}: use a longer sample_interval",
            )
        )
    held = packets_held(spec)
    need = held * BYTES_PER_PACKET_HELD + min(rows, MAX_SERIES_ROWS) * BYTES_PER_SERIES_ROW
    limit = memory_limit_bytes()
    if need > limit:
        out.append(
            (
                "bottleneck",
                f"the run would need about {need / 1e9:.1f} GB ({held:,} packets in flight "
                f"and queued at {BYTES_PER_PACKET_HELD} B each, plus series); the limit is "
                f"{limit / 1e9:.1f} GB (set {MEMORY_LIMIT_ENV} to raise it)",
            )
        )
    return out
