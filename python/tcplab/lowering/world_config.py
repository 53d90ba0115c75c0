"""The engine's ``WorldConfig`` (``crates/sim/src/config.rs``: integers in ns, bit/s, bytes,
packets) from a resolved spec: a copy of its fields under the engine's names, flow groups
expanded into flows. Everything that depends on other fields happens in :mod:`.resolve`.
"""

from __future__ import annotations

import json
from typing import Any

from tcplab import bpf, policy
from tcplab.lowering.resolve import ACCESS_RATE_FACTOR, _queue_limit, resolve
from tcplab.specs import contract
from tcplab.specs.algorithms import registry
from tcplab.specs.aqm import engine_config as aqm_engine_config
from tcplab.specs.model import DEFAULT_KERNEL, Spec, kernel_releases
from tcplab.specs.netem import engine_fields as netem_fields
from tcplab.specs.probes import engine_config as probes_config
from tcplab.specs.sources import engine_config as sources_config
from tcplab.specs.sources import onoff_config
from tcplab.specs.traces import TraceRate
from tcplab.specs.units import Size


def _link(rate: int, delay: int, buffer: Size, loss: float, link: Any = None) -> dict[str, Any]:
    """An engine ``LinkConfig``; ``link``: the spec's link whose jitter and reorder fields
    (tcplab.specs.netem) apply to this direction."""
    return {
        "rate_bps": int(rate),
        "delay_ns": int(delay),
        "buffer": _queue_limit(buffer),
        "loss": float(loss),
        **netem_fields(link),
    }


def _shaping(rate: Any, policer: Any, wire: int) -> dict[str, Any] | None:
    """The engine's ``Shaping`` of a link (net/shaping.rs), or None."""
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
                    **_cc_config(f.cc, f.bpf.build() if f.bpf is not None else bpf.NO_BUILD),
                    "params": _params_with_kernel(f.cc, dict(f.params), s.tcp.kernel),
                    "sender_access": _link(snd.rate, snd.delay, snd.buffer, snd.loss, snd),
                    "receiver_access": _link(rcv.rate, rcv.delay, rcv.buffer, rcv.loss, rcv),
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
                flows[-1]["onoff"] = onoff_config(f.onoff)
            if f.bpf is not None and f.bpf.state is not None:  # likewise
                flows[-1]["bpf_state"] = f.bpf.state
    # Trained policies (tcplab.policy): the file's contents, so the digest covers them.
    agents = [
        {"flow": i, "policy": policy.load(cc)}
        for i, cc in enumerate(c for f in s.flows for c in [f.cc] * f.count)
        if policy.is_policy(cc)
    ]
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
            "frto": s.tcp.frto,
            "handshake": s.tcp.handshake,
            # Always written (unlike the keys below): its default moved every result, so
            # every run digest must move with it.
            "start_jitter_ns": int(s.tcp.start_jitter),
        },
        "bottleneck": _link(b.rate, b.delay, b.buffer, b.loss, b),
        "flows": flows,
        "events": [
            {"at_ns": int(e.at), "rate_bps": e.rate, "delay_ns": e.delay, "loss": e.loss}
            # By time, and in file order at one instant (a stable sort): the order the
            # metrics assume (analysis/metrics.py in_force_order) and the one the kernel
            # backend's emulator needs, since it applies its events by index.
            for e in sorted(s.events, key=lambda e: e.at)
        ],
    }
    if agents:  # only when used, so other specs keep their engine config and digests
        config["agents"] = agents
    # The stack's release (rate sampling, loss detection; docs/BBR_KERNELS.md), only when
    # not today's, so specs without `[tcp] kernel` keep their configs and digests.
    if s.tcp.kernel != DEFAULT_KERNEL:
        config["tcp"]["kernel"] = kernel_releases()[s.tcp.kernel]
    # ECN and AQM keys only when used, so configs of specs without them are unchanged.
    if s.tcp.ecn:
        config["tcp"]["ecn"] = True
    if s.tcp.receive_buffer != "linux":
        config["tcp"]["receive_buffer"] = s.tcp.receive_buffer
    if s.tcp.rcv_truesize is not None:
        config["tcp"]["rcv_truesize"] = s.tcp.rcv_truesize
    # Only when not the engine's default, so a default spec's engine config (and the run
    # digest made from it) is what it was before `[tcp] hz` existed.
    if s.tcp.hz != contract.default("TcpConfig", "hz"):
        config["tcp"]["hz"] = s.tcp.hz
    if b.aqm is not None:
        wire = s.tcp.mss + s.tcp.header
        config["bottleneck"]["aqm"] = aqm_engine_config(b.aqm, wire, b.rate * b.bdp_rtt / 8e9)
    # Only when used, so that existing specs keep their engine config and run digests.
    if b.reverse is not None:
        r = b.reverse
        config["bottleneck_reverse"] = _link(
            r.rate if r.rate is not None else b.rate, b.delay, r.buffer, r.loss, r
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
                    "forward": _link(nl.rate, nl.delay, nl.buffer, nl.loss, nl),
                    "reverse": _link(
                        r.rate if r.rate is not None else nl.rate, nl.delay, r.buffer, r.loss, r
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
        top_rate = max([b.rate] + [e.rate for e in s.events if e.rate is not None])
        config["sources"] = sources_config(s, ACCESS_RATE_FACTOR * top_rate)
    if s.probes:  # only when used, as sources
        top_rate = max([b.rate] + [e.rate for e in s.events if e.rate is not None])
        config["probes"] = probes_config(s, ACCESS_RATE_FACTOR * top_rate)
    if any(f.path for f in s.flows):
        config["paths"] = [list(f.path or ["bottleneck"]) for f in s.flows for _ in range(f.count)]
    return config


def config_json(config: dict[str, Any]) -> str:
    """Canonical JSON of a config (sorted keys, no spaces): the basis of run digests."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def _params_with_kernel(cc: str, params: dict[str, Any], kernel: str) -> dict[str, Any]:
    """A flow's parameters with ``[tcp] kernel`` as its ``kernel`` parameter, for algorithms
    that take one (the BBR family) and flows that do not set their own: the release's
    label ("4.9"), a choice the engine resolves (crates/cc KernelRelease), so the release
    travels as written. Left out for 6.18, the engine's default."""
    if kernel == "6.18" or "kernel" in params or bpf.is_bpf(cc) or policy.is_policy(cc):
        return params
    algo = registry().get(cc)
    choice = algo.param("kernel") if algo is not None else None
    if choice is not None:
        params["kernel"] = kernel
    return params


def _cc_config(cc: str, build: bpf.Build = bpf.NO_BUILD) -> dict[str, Any]:
    """A flow's algorithm as the engine takes it: a registered name, or ``cc = "bpf"`` with
    the cached object of a ``bpf:`` program (tcplab.bpf; the path names the object's
    sha256, so the run digest covers the code that ran)."""
    if policy.is_policy(cc):  # an `external` flow the policy drives (config["agents"])
        return {"cc": "external"}
    if not bpf.is_bpf(cc):
        return {"cc": cc}
    return {"cc": "bpf", "bpf_object": bpf.program(cc, build).engine_ref}
