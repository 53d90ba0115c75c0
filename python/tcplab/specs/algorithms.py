"""The congestion-control algorithms the engine provides, with their parameter schemas.

The registry lives in Rust (``crates/cc/src/registry.rs``); this module reads it once
through the binding so that spec validation, ``tcplab algorithms`` and the docs all come
from the same schema.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any

from tcplab import bpf, policy, preset_file
from tcplab.engine import engine

ParamValue = bool | int | float | str


@dataclass(frozen=True)
class Param:
    """One algorithm parameter: kind is ``float``, ``int``, ``bool`` or ``choice`` (one of
    ``choices``: the spec writes a label, the flow carries its value)."""

    name: str
    kind: str
    default: float
    min: float
    max: float
    doc: str = ""
    choices: tuple[tuple[str, float], ...] = ()

    def default_value(self) -> ParamValue:
        """The default in its natural Python type."""
        if self.kind == "bool":
            return bool(self.default)
        if self.kind in ("int", "choice"):
            return int(self.default)
        return float(self.default)


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: name, one-line summary, source and parameters."""

    name: str
    summary: str
    source: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    family: str = ""
    """``loss``, ``delay``, ``loss_delay``, ``bbr``, ``bbr3`` or ``ecn``
    (``registry::Family``)."""
    held_against: str = ""
    """What the implementation has been checked against (``registry::held_against``):
    the kernel module, a BPF twin, a paper's claims, or "none yet"."""

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _from_engine(entry: dict) -> Algorithm:
    params = tuple(
        Param(
            name=p["name"],
            kind=str(p.get("kind", "float")).lower(),
            default=float(p.get("default", 0.0)),
            min=float(p.get("min", -math.inf)),
            max=float(p.get("max", math.inf)),
            doc=str(p.get("doc", "")),
            choices=tuple((str(label), float(v)) for label, v in p.get("choices", ())),
        )
        for p in entry.get("params", [])
    )
    return Algorithm(
        entry["name"],
        str(entry.get("summary", "")),
        str(entry.get("source", "")),
        params,
        str(entry.get("family", "")),
        str(entry.get("held_against", "")),
    )


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Algorithm]:
    """Every algorithm the engine knows, by name, in registry order.

    Raises
    ------
    RuntimeError
        If the Rust engine is not built (``pip install .`` builds it).
    """
    try:
        entries = engine().algorithms()
    except Exception as exc:  # noqa: BLE001 - report any binding failure as one message
        raise RuntimeError(
            f"could not read the algorithm registry from the engine: {exc}"
        ) from None
    return {a["name"]: _from_engine(a) for a in entries}


def check_params(name: str, given: dict[str, Any], build: Any = None) -> list[tuple[str, str]]:
    """Problems with algorithm ``name`` and its ``params``: (sub-path, message) pairs.

    The sub-path is ``"cc"`` or ``"params.<key>"``. The rules are the engine's own
    (``tcplab_sim::config::check_cc``, which also checks every flow of a run).
    """
    if bpf.is_bpf(name):  # a BPF program: its own globals are its parameters
        return bpf.check(name, given, build or bpf.NO_BUILD)
    if policy.is_policy(name):  # a trained policy (tcplab.policy): its file is all
        return policy.check(name, given)
    if preset_file.is_preset(name):  # a preset written in Python (tcplab.preset_file)
        return preset_file.check(name, given)
    for key, value in given.items():
        if isinstance(value, float) and not math.isfinite(value):
            return [(f"params.{key}", f"parameter '{key}' of {name}: {value} is not a number")]
    problem = engine().check_params(name, json.dumps(given))
    return [] if problem is None else [(problem[0], problem[1])]
