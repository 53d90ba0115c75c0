"""The engine's ``WorldConfig`` (``crates/sim/src/config.rs``: integers in ns, bit/s, bytes,
packets) from a resolved spec: a copy of its fields under the engine's names, flow groups
expanded into flows. Everything that depends on other fields happens in :mod:`.resolve`.

The config is written whole: every key of every engine type, its default included, and
``null`` for an option that is off, so what the engine runs can be read off it. A key is
left out only where the engine itself gives absence a meaning; each such place says so.
A run's digest is not made from this config (tcplab.runs.digest), so nothing here is
shaped by digests.
"""

from __future__ import annotations

import json
from typing import Any

from tcplab import bpf, policy, preset_file
from tcplab.lowering.resolve import ACCESS_RATE_FACTOR, _queue_limit, resolve
from tcplab.specs.algorithms import registry
from tcplab.specs.aqm import engine_config as aqm_engine_config
from tcplab.specs.model import Spec, kernel_releases
from tcplab.specs.netem import engine_link
from tcplab.specs.probes import engine_config as probes_config
from tcplab.specs.sources import engine_config as sources_config
from tcplab.specs.sources import onoff_config
from tcplab.specs.traces import TraceRate
from tcplab.specs.units import Size


def _link(
    rate: int, delay: int, buffer: Size, loss: float, link: Any = None, aqm: Any = None
) -> dict[str, Any]:
    """An engine ``LinkConfig``; ``link``: the spec's link whose jitter and reorder fields
    (tcplab.specs.netem) apply to this direction; ``aqm``: its engine ``aqm`` table."""
    return engine_link(int(rate), int(delay), _queue_limit(buffer), float(loss), link, aqm)


def _shaping(rate: Any, policer: Any, wire: int) -> dict[str, Any] | None:
    """The engine's ``Shaping`` of a link (net/shaping.rs), or None when nothing shapes it:
    the engine refuses an entry that shapes nothing ("shapes nothing: give trace and/or
    policer"), so an unshaped link has no entry in ``shaping``."""
    if not isinstance(rate, TraceRate) and policer is None:
        return None
    return {
        "trace": rate.engine_config() if isinstance(rate, TraceRate) else None,
        "policer": None
        if policer is None
        else {
            "rate_bps": int(policer.rate),
            "burst_bytes": int(policer.burst.value) * (wire if policer.burst.unit == "pkt" else 1),
        },
    }


def world_config(spec: Spec, seed: int | None = None) -> dict[str, Any]:
    """The engine's ``WorldConfig`` for a spec (resolved here if it is not yet).

    Flow groups are expanded: flow ``k`` of a group starts at ``start + k * stagger``.
    """
    s = resolve(spec)
    b = s.bottleneck
    wire = s.tcp.mss + s.tcp.header
    # The stack's release (rate sampling, loss detection; docs/BBR_KERNELS.md) as the
    # engine's code (major*100+minor), the one form it travels in: tcp.kernel and the
    # `kernel` parameter of the flows whose algorithm has one.
    kernel = kernel_releases()[s.tcp.kernel]
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
    # Trained policies (tcplab.policy) and preset files (tcplab.preset_file): each file
    # read once, not once per flow copy, for what its flows run underneath (a policy's
    # preset's underlay, a preset's controlled_cc) and a policy's for the agents the
    # engine's controller factory builds from its contents.
    policies = {f.cc: policy.load(f.cc) for f in s.flows if policy.is_policy(f.cc)}
    underlays = {cc: policy.underlay(p) for cc, p in policies.items()} | {
        f.cc: preset_file.load(f.cc).controlled_cc for f in s.flows if preset_file.is_preset(f.cc)
    }
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
                    **_cc_config(
                        f.cc,
                        f.bpf.build() if f.bpf is not None else bpf.NO_BUILD,
                        underlays.get(f.cc),
                    ),
                    "params": _params_with_kernel(f.cc, dict(f.params), kernel),
                    "sender_access": _link(snd.rate, snd.delay, snd.buffer, snd.loss, snd),
                    "receiver_access": _link(rcv.rate, rcv.delay, rcv.buffer, rcv.loss, rcv),
                    "start_ns": int(f.start + k * f.stagger),
                    "stop_ns": int(f.stop),
                    "app": app,
                    "ecn": f.ecn,  # null: the run's tcp.ecn
                    "onoff": onoff_config(f.onoff) if f.onoff is not None else None,
                    "bpf_state": f.bpf.state if f.bpf is not None else None,
                }
            )
    agents = [
        {"flow": i, "policy": policies[cc]}
        for i, cc in enumerate(c for f in s.flows for c in [f.cc] * f.count)
        if cc in policies
    ]
    links = []
    for nl in s.links:
        r = nl.reverse
        links.append(
            {
                "name": nl.name,
                "forward": _link(nl.rate, nl.delay, nl.buffer, nl.loss, nl),
                "reverse": _link(
                    r.rate if r.rate is not None else nl.rate, nl.delay, r.buffer, r.loss, r
                )
                if r
                else None,  # the engine's default: the forward rate and delay, unlimited
            }
        )
        for name, rate, pol in (
            (nl.name, nl.rate, nl.policer),
            (f"{nl.name}_reverse", r.rate if r else None, r.policer if r else None),
        ):
            if (sh := _shaping(rate, pol, wire)) is not None:
                shaping[name] = sh
    top_rate = max([b.rate] + [e.rate for e in s.events if e.rate is not None])
    r = b.reverse
    return {
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
            "ecn": s.tcp.ecn,
            "receive_buffer": s.tcp.receive_buffer,
            "rcv_truesize": s.tcp.rcv_truesize,  # null: the engine's TUN-path truesize
            "handshake": s.tcp.handshake,
            "hz": s.tcp.hz,
            "start_jitter_ns": int(s.tcp.start_jitter),
            "kernel": kernel,
        },
        "bottleneck": _link(
            b.rate,
            b.delay,
            b.buffer,
            b.loss,
            b,
            aqm_engine_config(b.aqm, wire, b.rate * b.bdp_rtt / 8e9) if b.aqm is not None else None,
        ),
        # null: the engine's default reverse direction (the data direction's rate and
        # delay, lossless, unlimited).
        "bottleneck_reverse": _link(
            r.rate if r.rate is not None else b.rate, b.delay, r.buffer, r.loss, r
        )
        if r is not None
        else None,
        "flows": flows,
        "events": [
            {"at_ns": int(e.at), "rate_bps": e.rate, "delay_ns": e.delay, "loss": e.loss}
            # By time, and in file order at one instant (a stable sort): the order the
            # metrics assume (analysis/metrics.py in_force_order) and the one the kernel
            # backend's emulator needs, since it applies its events by index.
            for e in sorted(s.events, key=lambda e: e.at)
        ],
        "shaping": shaping,
        "capture": list(s.experiment.pcap or []),
        "links": links,
        # Empty unless a flow names a path: the engine reads an empty list as every flow on
        # the dumbbell, and refuses sources and probes beside a non-empty one
        # (validate.rs check_sources, check_probes), so a dumbbell's is left empty.
        "paths": [list(f.path or ["bottleneck"]) for f in s.flows for _ in range(f.count)]
        if any(f.path for f in s.flows)
        else [],
        "sources": sources_config(s, ACCESS_RATE_FACTOR * top_rate),
        "probes": probes_config(s, ACCESS_RATE_FACTOR * top_rate),
        "agents": agents,
    }


def config_json(config: dict[str, Any]) -> str:
    """Canonical JSON of a config (sorted keys, no spaces), as the engine is handed it."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def _params_with_kernel(cc: str, params: dict[str, Any], kernel: int) -> dict[str, Any]:
    """A flow's parameters with the run's release (``[tcp] kernel`` as its code, the form
    tcp.kernel has) as its ``kernel`` parameter, for algorithms that take one (the BBR
    family) and flows that do not set their own. Other algorithms get no ``kernel``: the
    engine refuses a parameter an algorithm does not have, and fills the rest of the
    parameters' defaults itself (a `seed` only when absent: crates/sim native_cc.rs)."""
    if "kernel" in params or bpf.is_bpf(cc) or policy.is_policy(cc) or preset_file.is_preset(cc):
        return params
    algo = registry().get(cc)
    if algo is not None and algo.param("kernel") is not None:
        params["kernel"] = kernel
    return params


def _cc_config(
    cc: str, build: bpf.Build = bpf.NO_BUILD, underlay: str | None = None
) -> dict[str, Any]:
    """A flow's algorithm as the engine takes it: a registered name, or ``cc = "bpf"`` with
    the cached object of a ``bpf:`` program (tcplab.bpf; the path names the object's
    sha256), or ``underlay`` for a flow driven from its file (a ``policy:`` flow's
    preset's underlay, whose agent is in config["agents"]; a ``preset:`` flow's
    controlled_cc, driven from Python by tcplab.gym.preset_run); ``bpf_object`` is null
    for every flow but a BPF one's."""
    if underlay is not None:
        return {"cc": underlay, "bpf_object": None}
    if not bpf.is_bpf(cc):
        return {"cc": cc, "bpf_object": None}
    return {"cc": "bpf", "bpf_object": bpf.program(cc, build).engine_ref}
