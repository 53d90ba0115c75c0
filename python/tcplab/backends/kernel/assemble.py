"""The kernel run's records reshaped into the engine's raw result format (what
``tcplab._engine.run`` returns, see ``crates/py``), so :func:`tcplab.analysis.rundata.from_engine`
and every metric, report and sweep read a kernel run exactly as a simulated one.

Where each column comes from (the simulator's definitions: ``crates/sim/src/record.rs``):

* ``cwnd_pkts``, ``inflight_pkts``, ``pacing_rate_bps``, ``srtt_ms``, ``delivery_rate_bps``,
  ``ca_state``: the sender's ``TCP_INFO`` at the sample time (``snd_cwnd``;
  ``unacked - sacked - lost + retrans`` as tcp_packets_in_flight(); ``pacing_rate``;
  ``rtt``; ``delivery_rate``; ``ca_state``).
* ``rtt_ms``: the latest RTT sample at the sample time, as the simulator's column, measured
  by the emulator on the wire (crates/emu/src/emu.rs: the newest never-retransmitted
  segment a cumulative ACK newly acknowledges, from its read at the sender's device to
  the ACK's delivery there); ``TCP_INFO`` has no latest sample, and filling the column
  with the smoothed RTT made ``mean_rtt_ms`` mean two things (1.5-4 ms apart). NaN with
  an emulator that does not report it. The smoothed RTT is ``srtt_ms`` on both backends
  (``mean_srtt_ms``,
  docs/METRICS.md).
* ``throughput_bps``: payload bytes of the flow's data segments that reached the
  receiver's namespace during the interval, counted by the emulator (duplicates
  included, as the simulator). ``goodput_bps``: bytes the receiving application read
  during the interval (the simulator's in-order delivery). ``sending_rate_bps``:
  ``tcpi_bytes_sent`` (retransmissions included). ``retransmits``: ``tcpi_total_retrans``.
* ``cc_*``: for BBR, ``TCP_CC_INFO`` (``tcp_bbr_info``) gives ``cc_bw_bps`` (bbr_bw,
  the simulator's ``bw_bps``), ``cc_min_rtt_ms``, ``cc_pacing_gain``, ``cc_cwnd_gain`` and,
  from the two gains, ``cc_mode``. Every other ``cc_*`` column the simulator writes for
  this spec is present and NaN (empty for labels): the kernel does not export it.
* Before a flow connects its values are NaN (retransmits 0, ca_state empty); so are
  ``srtt_ms`` and ``rtt_ms`` until its first RTT sample (``tcpi_rtt`` is 0 until then).
* Per-flow counters: ``sent_packets`` = ``tcpi_data_segs_out``, ``sent_bytes`` =
  ``tcpi_bytes_sent``, ``retransmitted_packets`` = ``tcpi_total_retrans`` capped at
  ``tcpi_data_segs_out`` (the kernel's count includes SYN and FIN retransmissions, which
  carry no data; tcpinfo.sample), ``rto_count`` =
  ``tcpi_total_rto`` (kernel >= 6.7), ``rwnd_limited_ns`` = ``tcpi_rwnd_limited``
  (microseconds), all at the end of the run; ``received_*``,
  ``dropped_packets`` and ``in_flight_packets_at_end`` from the emulator;
  ``delivered_bytes`` from the receiving application, ``completed_ns`` (a finite flow's
  completion) when the receiving application read its last byte. The simulator's
  ``duplicate_packets``, ``recoveries`` and ``tlp_probes`` have no per-socket kernel
  counter and are left out. ``ce_packets``, ``ece_acks`` and ``ecn_reductions`` are
  counted on the wire by the emulator: data segments reaching the receiver with CE, ACKs
  reaching the sender with ECE, data segments the sender sent with CWR (one per
  reduction, tcp_ecn_send).
* ``sources``: the constant-rate sources' counters, the emulator's (it runs them as the
  simulator does: model packets only, never written to a namespace).
* Queue series and per-link counters: the emulator's bottleneck, the simulator's model
  (with a qdisc also ``marks`` and ``sojourn_ms``, as the simulator's queue table).
* ``emulator``: the emulator's report (summary.json ``engine.emulator``), with
  ``lateness_flag``: why its lateness could have changed the result (empty if none; see
  :func:`lateness_flag`).
"""

from __future__ import annotations

import math
from typing import Any

from tcplab.engine import engine
from tcplab.lowering import config_json
from tcplab.specs.model import Spec

NAN = math.nan
_KERNEL_CC = ("cc_bw_bps", "cc_min_rtt_ms", "cc_pacing_gain", "cc_cwnd_gain", "cc_mode")


def simulator_columns(config: dict[str, Any]) -> tuple[list[str], set[str]]:
    """The series columns the simulator writes for this config, and which are labels, as
    the engine announces them (``tcplab_sim::world::series_columns``, checked against real
    runs of every algorithm by ``crates/sim/tests/all_algorithms.rs``)."""

    cols = engine().series_columns(config_json(config))
    return [name for name, _ in cols], {name for name, kind in cols if kind == "str"}


def _rate(cur: float | None, prev: float | None, dt_s: float) -> float:
    if cur is None or prev is None or dt_s <= 0:
        return NAN
    return (cur - prev) * 8.0 / dt_s


def assemble(
    spec: Spec,
    config: dict[str, Any],
    emu: dict[str, Any],
    snd: dict[str, Any],
    rcv: dict[str, Any],
) -> dict[str, Any]:
    """The engine-format result of a kernel run (see the module doc for each value)."""
    n = len(config["flows"])
    iv = config["sample_interval_ns"]
    times = [k * iv for k in range(1, config["duration_ns"] // iv + 1)] if iv > 0 else []
    cols, labels = simulator_columns(config) if iv > 0 else ([], set())
    series: dict[str, list[Any]] = {c: [] for c in cols}
    e_rx = emu["series"]["received_bytes"]
    e_rtt = emu["series"].get("rtt_ms", [])
    r_rx = rcv["samples"]
    s_rows = snd["samples"]
    prev: list[dict[str, float | None]] = [
        {"rx": 0.0, "app": 0.0, "sent": 0.0, "retx": 0.0} for _ in range(n)
    ]
    for k, t in enumerate(times):
        dt_s = iv / 1e9
        for i in range(n):
            s = s_rows[k][i] if k < len(s_rows) and i < len(s_rows[k]) else None
            rx = float(e_rx[i][k]) if k < len(e_rx[i]) else None
            app = float(r_rx[k][i]) if k < len(r_rx) else None
            rtt = e_rtt[i][k] if i < len(e_rtt) and k < len(e_rtt[i]) else None
            sent = float(s["bytes_sent"]) if s else None
            retx = float(s["total_retrans"]) if s else None
            row: dict[str, Any] = {c: ("" if c in labels else NAN) for c in cols}
            row.update(
                {
                    "time_ns": t,
                    "flow": i,
                    "retransmits": 0,
                    "throughput_bps": _rate(rx, prev[i]["rx"], dt_s),
                    "goodput_bps": _rate(app, prev[i]["app"], dt_s),
                    "rtt_ms": float(rtt) if rtt is not None else NAN,
                }
            )
            if s:
                row.update(
                    {
                        c: s[c]
                        for c in (
                            "cwnd_pkts",
                            "inflight_pkts",
                            "pacing_rate_bps",
                            "srtt_ms",
                            "delivery_rate_bps",
                            "ca_state",
                        )
                    }
                )
                row["sending_rate_bps"] = _rate(sent, prev[i]["sent"], dt_s)
                row["retransmits"] = int(retx - (prev[i]["retx"] or 0.0))
                for c in _KERNEL_CC:
                    if c in s and c in series:
                        row[c] = s[c]
            prev[i] = {
                "rx": rx if rx is not None else prev[i]["rx"],
                "app": app if app is not None else prev[i]["app"],
                "sent": sent if sent is not None else prev[i]["sent"],
                "retx": retx if retx is not None else prev[i]["retx"],
            }
            for c in cols:
                series[c].append(row.get(c, NAN))
    last = s_rows[-1] if s_rows else [None] * n
    done = rcv.get("completed_ns", [])
    flows = []
    for i, f in enumerate(config["flows"]):
        s = last[i] if i < len(last) else None
        net = emu["flows"][i]
        flows.append(
            {
                "cc": f["cc"],
                "sent_packets": int(s["data_segs_out"]) if s else 0,
                "sent_bytes": int(s["bytes_sent"]) if s else 0,
                "retransmitted_packets": int(s["total_retrans"]) if s else 0,
                "received_packets": int(net["received_packets"]),
                "received_bytes": int(net["received_bytes"]),
                "delivered_bytes": int(rcv["delivered_bytes"][i]),
                "dropped_packets": int(net["dropped_packets"]),
                "in_flight_packets_at_end": int(net["in_flight_packets_at_end"]),
                "rto_count": int(s["total_rto"]) if s else 0,
                "rwnd_limited_ns": int(s.get("rwnd_limited_us", 0)) * 1000 if s else 0,
                "spurious_retransmissions": int(s.get("dsack_dups", 0)) if s else 0,
                "reordering": int(s.get("reordering", 3)) if s else 3,
                "reord_seen": int(s.get("reord_seen", 0)) if s else 0,
                "ce_packets": int(net.get("ce_packets", 0)),
                "ece_acks": int(net.get("ece_acks", 0)),
                "ecn_reductions": int(net.get("cwr_packets", 0)),
                "completed_ns": done[i] if i < len(done) else None,
                "start_ns": int(f["start_ns"]),
                "stop_ns": int(f["stop_ns"] if f["stop_ns"] is not None else config["duration_ns"]),
            }
        )
    q = emu["series"]
    return {
        "flows": flows,
        "queues": emu["queues"],
        # The links the emulator built and ran (tcplab-emu's Report::links, the same
        # builder as the simulator's); absent from an older emulator's report.
        "links": emu.get("links", []),
        "series": series,
        "queue_series": {
            "time_ns": q["time_ns"],
            "backlog_pkts": q["backlog_pkts"],
            "backlog_bytes": q["backlog_bytes"],
            "drops": q["drops"],
        }
        | _aqm_columns(q),
        "bottleneck_packets": emu["bottleneck_packets"],
        "sources": emu.get("sources", []),
        "events_processed": emu["lateness"]["events"],
        "emulator": {
            k: emu[k]
            for k in (
                "lateness",
                "read_after_clock",
                "max_packet_bytes",
                "foreign_packets",
                "write_errors",
                "packets_forwarded",
                "cpu_s",
            )
            if k in emu
        }
        | {"lateness_flag": lateness_flag(emu["lateness"])},
    }


def _aqm_columns(q: dict[str, Any]) -> dict[str, list[Any]]:
    """The qdisc's queue columns (the simulator writes them only with a qdisc)."""
    if not q.get("marks"):
        return {}
    return {
        "marks": q["marks"],
        "sojourn_ms": [NAN if v is None else float(v) for v in q["sojourn_ms"]],
    }


# The smallest delay increase a kernel algorithm reacts to: HyStart's delay threshold
# clamp(delay_min / 8, 4 ms, 16 ms) (tcp_cubic.c HYSTART_DELAY_MIN = 4 ms).
LATE_MAX_NS = 4_000_000
# More than this share of events over 1 ms late (the ACK-train spacing HyStart tests
# is 2 ms; a 20 Mbit/s link serialises a packet in 0.6 ms).
LATE_OVER_1MS_SHARE = 1e-3


def lateness_flag(lat: dict) -> list[str]:
    """Why the emulator's lateness (``Lateness`` of crates/emu) could have changed what the
    kernel did, or [] when it could not: a late wake-up delays a packet's hand-over to
    the kernel (never the queue's schedule), i.e. adds delay jitter to its RTT. Flagged:
    a wake-up as late as the smallest delay increase an algorithm reacts to (HyStart's 4
    ms), or more than 0.1 % of events over 1 ms late."""
    why = []
    if lat.get("max_ns", 0) >= LATE_MAX_NS:
        why.append(f"max lateness {lat['max_ns'] / 1e6:.1f} ms >= 4 ms (HyStart's delay threshold)")
    n = lat.get("events", 0)
    if n and lat.get("over_1ms", 0) > LATE_OVER_1MS_SHARE * n:
        why.append(f"{lat['over_1ms']} of {n} events over 1 ms late (> 0.1 %)")
    return why
