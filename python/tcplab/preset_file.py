"""``cc = "preset:FILE.py"``: a learned controller written in Python, its preset
(observation, action, reward) and its policy in one file, run as a whole ``tcplab run``.

The file is a Python module that defines::

    PRESET = MyPreset          # a tcplab.gym.presets.Preset subclass, or an instance
    def policy(observation):   # the action for one observation (the preset's spaces)
        ...
    INTERVAL = "20ms"          # optional: a duration (>= 1 ms) or "rtt"; default "10ms"
    RTT_FRACTION = 1.0         # optional: with INTERVAL = "rtt", the fraction of srtt

The flow runs ``PRESET.controlled_cc`` in the engine (``external`` for a preset that
writes rate and window, as Aurora's; ``cubic`` for one that scales CUBIC's window, as
Orca's), and between the engine's steps tcplab.gym.preset_run calls the preset and the
policy exactly as :class:`tcplab.gym.CongestionControlEnv` does in training (the same
start rule, interval and writes): Python runs once per flow and interval, never per
packet. A flow is reported as ``preset:<PRESET.name>``; the run directory is an ordinary
one plus ``actions.csv`` (every write, as the environment's ``finish`` stores it).

Where it runs (first version, docs/learning.md): ``tcplab run`` and ``tcplab.run`` on the
simulator. The kernel backend refuses it (its policy runs inside a BPF program's agent,
not in an arbitrary Python module: deploy a trained policy as ``policy:FILE``), and so do
sweeps and the catalogue (their workers run specs without the stepping driver).

Loading the file runs it (as ``import`` would), when a spec naming it is checked: a spec
that names a preset file trusts its code. Each file is imported once per process and
its contents; the run's digest holds the file's sha256 (tcplab.runs.digest), not the
modules it imports. A relative FILE is taken against the spec file's directory.
"""

from __future__ import annotations

import hashlib
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tcplab.cc_names import map_cc

PREFIX = "preset:"
MAX_BYTES = 1024 * 1024
SWEEP_REFUSES = "sweeps and the catalogue run specs without its stepping driver (not yet)"
KERNEL_REFUSES = (
    "on the kernel backend a policy runs inside a BPF program's agent (deploy a trained one "
    'as "policy:FILE")'
)
DEFAULT_INTERVAL = "10ms"  # tcplab.gym.CongestionControlEnv's default interval


def is_preset(cc: Any) -> bool:
    return isinstance(cc, str) and cc.startswith(PREFIX)


def path(cc: str) -> Path:
    return Path(cc[len(PREFIX) :])


def absolute_paths(raw: Any, base: Path) -> Any:
    """``raw`` (a spec as read from TOML) with every ``preset:`` path made absolute
    against ``base``, the spec file's directory."""

    def fix(cc: str) -> str:
        if not is_preset(cc) or path(cc).is_absolute():
            return cc
        return PREFIX + str((base / path(cc)).resolve())

    return map_cc(raw, fix)


@dataclass(frozen=True)
class PresetFile:
    """A loaded preset file: its path and its module's ``PRESET`` (class or instance),
    ``policy``, ``INTERVAL`` and ``RTT_FRACTION``."""

    path: Path
    preset: Any
    policy: Any
    interval: Any
    rtt_fraction: Any

    @property
    def controlled_cc(self) -> str:
        return str(self.preset.controlled_cc)


_LOADED: dict[tuple[str, str], PresetFile] = {}


def _read(p: Path) -> bytes:
    if p.suffix != ".py":
        raise ValueError(f"'{p}': a preset file is a Python module ending in .py")
    if not p.is_file():
        raise ValueError(f"'{p}': no such preset file")
    if p.stat().st_size > MAX_BYTES:
        raise ValueError(f"'{p}': larger than {MAX_BYTES} bytes")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise ValueError(f"'{p}': cannot be read ({exc})") from None


def load(cc: str) -> PresetFile:
    """The preset file of ``cc``, imported (once per path and contents); ValueError naming
    the file and what is wrong: missing, not .py, raising on import (its last frame
    named), or without ``PRESET``/``policy``."""
    p = path(cc)
    data = _read(p)
    digest = hashlib.sha256(data).hexdigest()
    key = (str(p), digest)
    if key in _LOADED:
        return _LOADED[key]
    module = _import(p, data, digest)
    missing = [n for n in ("PRESET", "policy") if not hasattr(module, n)]
    if missing:
        raise ValueError(
            f"'{p}': a preset file defines PRESET (a tcplab.gym Preset subclass or "
            f"instance) and policy(observation) -> action; it has no {' or '.join(missing)}"
        )
    if not callable(module.policy):
        raise ValueError(f"'{p}': policy must be a function of an observation")
    if not isinstance(getattr(module.PRESET, "controlled_cc", None), str):
        raise ValueError(
            f"'{p}': PRESET must be a tcplab.gym.presets.Preset subclass or instance "
            f"(with controlled_cc); got {module.PRESET!r:.80}"
        )
    loaded = PresetFile(
        p,
        module.PRESET,
        module.policy,
        getattr(module, "INTERVAL", DEFAULT_INTERVAL),
        getattr(module, "RTT_FRACTION", 1.0),
    )
    _LOADED[key] = loaded
    return loaded


def _import(p: Path, data: bytes, digest: str) -> ModuleType:
    """The module of ``data`` (the file's bytes, as read and hashed), under a name of its
    own, so that two files of one stem and two versions of one file never meet."""
    name = f"tcplab_preset_{p.stem}_{digest[:12]}"
    module = ModuleType(name)
    module.__file__ = str(p)
    sys.modules[name] = module  # dataclasses and pickling look their module up
    try:
        code = compile(data, str(p), "exec")
        exec(code, module.__dict__)  # noqa: S102 - the spec names this file to run it
    except Exception as exc:  # noqa: BLE001 - any error of the user's module, named
        del sys.modules[name]
        frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if fr.filename == str(p)]
        where = f" (line {frames[-1].lineno})" if frames else ""
        raise ValueError(f"'{p}': importing it raised {type(exc).__name__}{where}: {exc}") from None
    return module


def check(cc: str, given: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with a ``preset:`` cc: (sub-path, message) pairs."""
    if given:
        return [(f"params.{next(iter(given))}", "a preset file takes no params (its file is all)")]
    try:
        load(cc)
    except ValueError as exc:
        return [("cc", str(exc))]
    return []


def flows(spec: Any) -> list[tuple[int, str]]:
    """(index in the spec's [[flows]], cc) of every ``preset:`` flow of ``spec``."""
    return [(i, f.cc) for i, f in enumerate(spec.flows) if is_preset(f.cc)]


def refuse(spec: Any, where: str) -> list[tuple[str, str]]:
    """The problem of each ``preset:`` flow of ``spec`` in a place that cannot run one
    (``where``: what refuses, and what to use instead)."""
    return [
        (
            f"flows[{i}].cc",
            f"a preset: file runs only in a simulated `tcplab run` (or tcplab.run); {where}",
        )
        for i, _ in flows(spec)
    ]
