"""Problems of a spec that span fields: times beyond the run, start after stop, shaping
and topology names, workloads, algorithms and their parameters."""

from __future__ import annotations

import re
from typing import Any

from tcplab.bpf import check_build, is_bpf
from tcplab.preset_file import is_preset
from tcplab.specs.algorithms import check_params
from tcplab.specs.checks import AGGREGATE_KEYS, check_expression
from tcplab.specs.limits import check_rates
from tcplab.specs.links import link_names
from tcplab.specs.model import (
    MAX_LINK_DELAY_NS,
    Spec,
)
from tcplab.specs.probes import check as _check_probes
from tcplab.specs.probes import names as probe_names
from tcplab.specs.sources import check as _check_sources
from tcplab.specs.traces import TraceRate
from tcplab.specs.units import (
    format_time,
)
from tcplab.specs.workload import read_cdf

WINDOW_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _off_grid(at: str, edges: list[int], si: int, dur: int) -> list[tuple[str, str]]:
    """A window's edges must fall on the sample grid (multiples of the sample interval, or
    the run's end): a window's metrics are sums and means over whole samples, and an edge
    inside a sample counted all of it (utilisation 1.753 over [6.99 s, 7.1 s] of
    a 20 Mbit/s link sampled every 100 ms)."""
    if si <= 0:
        return []
    off = [e for e in edges if e % si and e != dur]
    if not off:
        return []
    e = off[0]
    lo, hi = e - e % si, e - e % si + si
    return [
        (
            at,
            f"{format_time(e)} is not on the sample grid: window edges must be multiples of "
            f"experiment.sample_interval ({format_time(si)}) or the run's end; "
            f"use {format_time(lo)} or {format_time(hi)}",
        )
    ]


def cross_check(spec: Spec, check_algorithms: bool = True) -> list[tuple[str, str]]:
    """Problems that span fields: times beyond the run, start after stop, algorithms."""
    p: list[tuple[str, str]] = []
    dur = spec.experiment.duration
    if dur <= 0:
        p.append(("experiment.duration", "must be > 0"))
    si = spec.experiment.sample_interval
    if si <= 0 or si > dur:
        p.append(
            (
                "experiment.sample_interval",
                f"must be > 0 and <= experiment.duration ({format_time(dur)})",
            )
        )
    a = spec.experiment.analysis
    if a is not None and not (0 <= a[0] < (a[1] if len(a) > 1 else dur) <= dur):
        p.append(
            (
                "experiment.analysis",
                f"must be [from] or [from, to] with 0 <= from < to <= experiment.duration "
                f"({format_time(dur)}), got [{', '.join(format_time(x) for x in a)}]",
            )
        )
    elif a is not None:
        p += _off_grid("experiment.analysis", a, si, dur)
    for name, w in spec.experiment.windows.items():
        at = f"experiment.windows.{name}"
        if not WINDOW_NAME.fullmatch(name):
            p.append(
                (at, "a window name is lower-case letters, digits and '_', starting with a letter")
            )
        elif len(w) != 2 or not 0 <= w[0] < w[1] <= dur:
            p.append(
                (
                    at,
                    f"must be [from, to] with 0 <= from < to <= experiment.duration ({format_time(dur)}), "
                    f"got [{', '.join(format_time(x) for x in w)}]",
                )
            )
        else:
            p += _off_grid(at, w, si, dur)
    if spec.bottleneck.bdp_rtt is not None and spec.bottleneck.bdp_rtt <= 0:
        p.append(("bottleneck.bdp_rtt", "must be > 0"))
    for i, f in enumerate(spec.flows):
        at = f"flows[{i}]"
        last_start = f.start + f.stagger * (f.count - 1)
        stop = f.stop if f.stop is not None else dur
        if f.stop is not None and f.stop > dur:
            p.append(
                (
                    f"{at}.stop",
                    f"{format_time(f.stop)} is after the end of the experiment ({format_time(dur)})",
                )
            )
        if f.start >= stop:
            p.append(
                (f"{at}.start", f"{format_time(f.start)} is not before stop ({format_time(stop)})")
            )
        elif last_start >= stop:
            p.append(
                (
                    f"{at}.stagger",
                    f"the last flow of the group would start at {format_time(last_start)}, "
                    f"not before stop ({format_time(stop)})",
                )
            )
        if f.size is not None and f.size.unit not in ("bytes", "pkt"):
            p.append(
                (f"{at}.size", "a transfer size is bytes or packets (e.g. '10MiB', '1000pkt')")
            )
        if f.rtt is None and not (
            f.access
            and f.access.delay is not None
            and f.receiver_access
            and f.receiver_access.delay is not None
        ):
            p.append(
                (f"{at}.rtt", "required (or give both access.delay and receiver_access.delay)")
            )
        if f.bpf is not None:
            p += [(f"{at}.bpf.{sub}", msg) for sub, msg in check_build(f.bpf.build())]
            if not is_bpf(f.cc):
                p.append((f"{at}.bpf", 'only for a BPF program (cc = "bpf:...")'))
        if check_algorithms and not any(sub.startswith(f"{at}.bpf") for sub, _ in p):
            build = f.bpf.build() if f.bpf is not None else None
            for sub, msg in check_params(f.cc, f.params, build):
                p.append((f"{at}.{sub}", msg))
    p += _check_shaping(spec)
    p += _check_topology(spec)
    p += _check_workloads(spec, check_algorithms)
    p += _check_sources(spec)
    p += _check_probes(spec)
    if spec.experiment.pcap:
        names = link_names(spec.flow_count(), [nl.name for nl in spec.links])
        for i, name in enumerate(spec.experiment.pcap):
            if name not in names:
                shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
                p.append(
                    (
                        f"experiment.pcap[{i}]",
                        f"no link '{name}'; links: {shown} "
                        "(flow<k>.<sender_access|receiver_access>[_reverse])",
                    )
                )
    for i, e in enumerate(spec.events):
        if e.at > dur:
            p.append(
                (
                    f"events[{i}].at",
                    f"{format_time(e.at)} is after the end of the experiment ({format_time(dur)})",
                )
            )
        if e.rate is None and e.delay is None and e.loss is None:
            p.append((f"events[{i}]", "changes nothing; give rate, delay and/or loss"))
        if e.delay is not None and e.delay > MAX_LINK_DELAY_NS:
            p.append(
                (
                    f"events[{i}].delay",
                    f"{format_time(e.delay)} is more than the longest link delay, "
                    f"{format_time(MAX_LINK_DELAY_NS)}",
                )
            )
    p += check_rates(spec)
    if spec.checks:
        ccs = {f.cc for f in spec.flows}
        for i, c in enumerate(spec.checks):
            for field in ("metric", "of"):
                expr = getattr(c, field)
                why = (
                    check_expression(
                        expr,
                        ccs,
                        spec.flow_count(),
                        AGGREGATE_KEYS,
                        window=spec.experiment.analysis is not None,
                        windows=set(spec.experiment.windows),
                        probes=probe_names(spec),
                    )
                    if expr is not None
                    else None
                )
                if why:
                    p.append((f"checks[{i}].{field}", why))
    return p


def _check_shaping(spec: Spec) -> list[tuple[str, str]]:
    """Policer bursts of at least one packet, no rate events on a traced bottleneck, a
    reverse bottleneck without its own delay."""
    p: list[tuple[str, str]] = []
    wire = spec.tcp.mss + spec.tcp.header
    links: list[tuple[str, Any]] = [("bottleneck", spec.bottleneck)]
    if spec.bottleneck.reverse is not None:
        links.append(("bottleneck.reverse", spec.bottleneck.reverse))
        if spec.bottleneck.reverse.delay is not None:
            p.append(
                (
                    "bottleneck.reverse.delay",
                    "the reverse direction has the bottleneck's delay; "
                    "allowed: rate, buffer, loss, policer, jitter and reorder fields",
                )
            )
    for i, f in enumerate(spec.flows):
        links += [
            (f"flows[{i}].access", f.access),
            (f"flows[{i}].receiver_access", f.receiver_access),
        ]
    for i, nl in enumerate(spec.links):
        links.append((f"links[{i}]", nl))
        if nl.reverse is not None:
            links.append((f"links[{i}].reverse", nl.reverse))
            if nl.reverse.delay is not None:
                p.append(
                    (
                        f"links[{i}].reverse.delay",
                        "the reverse direction has the link's delay; "
                        "allowed: rate, buffer, loss, policer, jitter and reorder fields",
                    )
                )
    for at, link in links:
        pol = getattr(link, "policer", None)
        if pol is None:
            continue
        if pol.burst.unit not in ("bytes", "pkt"):
            p.append(
                (
                    f"{at}.policer.burst",
                    "a bucket depth is bytes or packets (e.g. '20KiB', '10pkt')",
                )
            )
        elif (pol.burst.value * wire if pol.burst.unit == "pkt" else pol.burst.value) < wire:
            p.append((f"{at}.policer.burst", f"must hold at least one full packet ({wire} bytes)"))
    if isinstance(spec.bottleneck.rate, TraceRate):
        for i, e in enumerate(spec.events):
            if e.rate is not None:
                p.append(
                    (
                        f"events[{i}].rate",
                        "the bottleneck's rate follows a trace; rate events are not allowed "
                        "(delay and loss events are)",
                    )
                )
    return p


_LINK_NAME = __import__("re").compile(r"[A-Za-z0-9_-]+")


def _check_topology(spec: Spec) -> list[tuple[str, str]]:
    """[[links]] names and flows' paths (crates/sim/src/net/topology.rs checks the same)."""
    p: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, nl in enumerate(spec.links):
        n = nl.name
        if (
            not _LINK_NAME.fullmatch(n)
            or n == "bottleneck"
            or n.endswith("_reverse")
            or n.startswith("flow")
        ):
            p.append(
                (
                    f"links[{i}].name",
                    f"'{n}': a name is letters, digits, _ and -, not 'bottleneck', "
                    "not starting with 'flow', not ending in '_reverse'",
                )
            )
        elif n in seen:
            p.append((f"links[{i}].name", f"'{n}' names two links"))
        seen.add(n)
    hops = ["bottleneck", "bottleneck_reverse"] + [
        h for nl in spec.links for h in (nl.name, nl.name + "_reverse")
    ]
    for i, f in enumerate(spec.flows):
        for k, h in enumerate(f.path or []):
            if h not in hops:
                p.append((f"flows[{i}].path[{k}]", f"no link '{h}'; allowed: {', '.join(hops)}"))
            elif h in (f.path or [])[:k]:
                p.append((f"flows[{i}].path[{k}]", f"'{h}' twice in one path"))
    return p


def _check_workloads(spec: Spec, check_algorithms: bool) -> list[tuple[str, str]]:
    """At least one flow or workload; each workload's rate or load, size and times."""
    p: list[tuple[str, str]] = []
    if not spec.flows and not spec.workloads and not spec.sources and not spec.probes:
        p.append(
            (
                "flows",
                "at least one [[flows]], [[workloads]], [[sources]] or [[probes]] table is required",
            )
        )
    dur = spec.experiment.duration
    for i, w in enumerate(spec.workloads):
        at = f"workloads[{i}]"
        if (w.rate is None) == (w.load is None):
            p.append(
                (at, "give exactly one of rate (flows per second) and load (x bottleneck rate)")
            )
        stop = w.stop if w.stop is not None else dur
        if not 0 <= w.start < stop <= dur:
            p.append(
                (
                    f"{at}.stop",
                    f"arrivals need 0 <= start < stop <= experiment.duration ({format_time(dur)})",
                )
            )
        s = w.size
        need = {"fixed": "value", "exponential": "mean", "pareto": "mean", "empirical": "cdf"}[
            s.dist
        ]
        given = [k for k in ("value", "mean", "shape", "cdf") if getattr(s, k) is not None]
        allowed = [need] + (["shape"] if s.dist == "pareto" else [])
        if need not in given or any(k not in allowed for k in given):
            p.append((f"{at}.size", f'dist = "{s.dist}" takes {" and ".join(allowed)}'))
        elif s.dist == "pareto" and s.shape is None:
            p.append((f"{at}.size.shape", "required for pareto (> 1, so that the mean exists)"))
        for k in ("value", "mean"):
            v = getattr(s, k)
            if v is not None and (v.unit != "bytes" or v.value <= 0):
                p.append((f"{at}.size.{k}", "a size in bytes > 0 (e.g. '100KiB')"))
        if s.dist == "empirical" and s.cdf is not None:
            try:
                read_cdf(s.cdf)
            except ValueError as exc:
                p.append((f"{at}.size.cdf", str(exc)))
        if is_preset(w.cc):  # its driver steps [[flows]] entries (tcplab.gym.preset_run)
            p.append(
                (f"{at}.cc", "a preset: file drives a [[flows]] entry, not a workload's flows")
            )
        elif check_algorithms:
            for sub, msg in check_params(w.cc, w.params):
                p.append((f"{at}.{sub}", msg))
    return p
