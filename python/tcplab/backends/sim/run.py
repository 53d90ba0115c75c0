"""Running a ``WorldConfig`` on the engine, and its complaints mapped back to the spec."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tcplab.engine import engine, engine_schema
from tcplab.errors import EngineError, SpecError
from tcplab.lowering.resolve import resolve
from tcplab.lowering.world_config import config_json, world_config
from tcplab.specs.contract import spec_name
from tcplab.specs.limits import BYTES_PER_PACKET_HELD, memory_limit
from tcplab.specs.model import Spec


def run_config(
    config: dict[str, Any],
    progress: Callable[[float], None] | None = None,
    spec: Spec | None = None,
) -> dict[str, Any]:
    """Run the engine on a ``WorldConfig``; return its raw result dictionary.

    Raises
    ------
    SpecError
        If the engine rejects the config: at the field of ``spec`` the config field came
        from when the spec is given, else at the config field.
    EngineError
        If the engine fails internally; no Rust panic reaches the caller.

    A flow's BPF program that fails during the run (out-of-bounds access, instruction
    budget, a kfunc's bad argument: the engine's AlgorithmFault) is the user's program,
    not tcplab: a SpecError at that flow's ``cc`` with the program's message (exit 2; it
    was an EngineError, exit 1, which docs/usage.md keeps for tcplab's own failures).
    """
    eng = engine()
    # `except ()` matches nothing: an engine without the type (tests' fake) never raises it.
    algorithm_fault = getattr(eng, "AlgorithmFault", ())
    text = config_json(config)
    limit, whence = memory_limit()
    try:
        return eng.run(text, progress, max_packets_held=limit // BYTES_PER_PACKET_HELD)
    except ValueError as exc:
        field, _, msg = str(exc).partition(": ")
        if spec is not None and msg and _SEGMENT.match(field):
            raise SpecError([(spec_field(field, spec), msg)]) from None
        raise SpecError([("engine config", str(exc))]) from None
    except algorithm_fault as exc:
        raise SpecError([_fault_problem(exc, spec)]) from None
    except MemoryError as exc:
        # An unlimited buffer (and receive buffer) lets the queue grow with the run: the
        # estimate before the run counts nothing for it, so the engine stops the run at
        # the limit instead of aborting on a failed allocation (3.1 GB, exit 134).
        raise SpecError(
            [
                (
                    "bottleneck.buffer",
                    f"{exc} (about {BYTES_PER_PACKET_HELD} B each, {limit / 1e9:.3g} GB: "
                    f"{whence}): give the bottleneck a buffer, or the flows a receive "
                    "buffer, so that the queue is bounded",
                )
            ]
        ) from None
    except BaseException as exc:  # PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise EngineError(f"the simulator failed: {type(exc).__name__}: {exc}") from None


def _fault_problem(exc: Any, spec: Spec | None) -> tuple[str, str]:
    """(field, message) of a flow's algorithm that failed during the run: the field is
    its group's ``cc`` (flow ``exc.flow`` counts every group's flows)."""
    flow = int(exc.flow)
    if spec is None:
        return f"flows[{flow}].cc", f"failed during the run: {exc.message}"
    field = spec_field(f"flows[{flow}].cc", spec)
    k, cc = flow, "the algorithm"
    for group in spec.flows:
        if k < group.count:
            cc = group.cc
            break
        k -= group.count
    return (
        field,
        f"{cc} failed during the run (flow {flow}): {exc.message}; the run stopped (the "
        "algorithm cannot go on past such a failure) and nothing was written",
    )


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
        name_in_spec = spec_name(name, prop)
        if name in ("flows", "sources") and not out and indices:
            k, group = indices[0], 0
            for g, f in enumerate(spec.flows if name == "flows" else spec.sources):
                if k < f.count:
                    group = g
                    break
                k -= f.count
            indices[0] = group
        out.append(name_in_spec + "".join(f"[{i}]" for i in indices))
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
