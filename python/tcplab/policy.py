"""``cc = "policy:FILE"``: a trained policy (a JSON file, ``format = "tcplab-policy/1"``)
driving the flow from inside the engine, with the observation and action code
tcplab.gym trains with (crates/sim/src/world/agent.rs). The flow runs ``external``
underneath, its rate and window written by the policy at each monitor interval; it is
reported as ``policy:<name>``. A relative FILE is taken against the spec file's
directory. The file's contents (not its path) go into the engine config, so a run's
digest covers the weights that ran.

The format (see ``PolicyConfig`` in agent.rs)::

    {"format": "tcplab-policy/1", "name": "cem-linear", "preset": "aurora",
     "history": 10, "rtt_fraction": 0.5,          # or "interval_ns": 10000000
     "start_fraction": 1.0,                      # start rate / bottleneck rate
     "transform": "aurora_log",                  # or "none"
     "layers": [{"weights": [[...]], "bias": [...], "activation": "linear"}]}

The last layer has one output, Aurora's action (clamped to [-10, 10]); activations are
"linear", "tanh" or "relu". ``tcplab.gym.presets.Aurora`` with the same history, interval
and ``start_fraction`` computes the same observations: a policy trained there runs here
unchanged.

On the kernel backend the same file drives real Linux TCP: the flow runs the BPF program
tcplab/data/bpf/policy/policy_rate.bpf.c and an agent in the sender's namespace steps the
engine's controller on the socket's measurements (tcplab/backends/kernel/policy_agent.py),
so ``--backend sim,kernel`` compares a policy like any algorithm.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcplab.cc_names import map_cc
from tcplab.engine import engine

PREFIX = "policy:"
MAX_BYTES = 16 * 1024 * 1024


def is_policy(cc: Any) -> bool:
    return isinstance(cc, str) and cc.startswith(PREFIX)


def path(cc: str) -> Path:
    return Path(cc[len(PREFIX) :])


def absolute_paths(raw: Any, base: Path) -> Any:
    """``raw`` (a spec as read from TOML) with every ``policy:`` path of a flow's ``cc``
    (or a swept ``...cc`` list) made absolute against ``base``, the spec file's directory."""
    return map_cc(raw, lambda cc: _absolute(cc, base))


def _absolute(cc: str, base: Path) -> str:
    if not is_policy(cc) or path(cc).is_absolute():
        return cc
    return PREFIX + str((base / path(cc)).resolve())


def load(cc: str) -> dict[str, Any]:
    """The policy file of ``cc`` as a dictionary (ValueError naming what is wrong)."""
    p = path(cc)
    if not p.is_file():
        raise ValueError(f"'{p}': no such policy file")
    if p.stat().st_size > MAX_BYTES:
        raise ValueError(f"'{p}': larger than {MAX_BYTES} bytes")
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"'{p}': not a JSON policy file ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"'{p}': a policy file holds a JSON object")
    return data


def check(cc: str, given: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with a ``policy:`` cc: (sub-path, message) pairs."""
    if given:
        return [(f"params.{next(iter(given))}", "a policy takes no params (its file is all)")]
    try:
        engine().check_policy(json.dumps(load(cc)))
    except ValueError as exc:
        return [("cc", f"{path(cc)}: {exc}")]
    return []
