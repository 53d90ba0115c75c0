"""``cc = "policy:FILE"``: a trained policy (a JSON file, ``format = "tcplab-policy/1"``)
driving the flow from inside the engine, with the observation and action code
tcplab.gym trains with (crates/controllers/src/policy/, an interval agent the engine
drives). The flow runs ``external`` underneath, its rate and window written by the
policy at each monitor interval; it is reported as ``policy:<name>``. A relative FILE
is taken against the spec file's directory. The file's contents (not its path) go into
the engine config, and their sha256 into the run's digest (tcplab.runs.digest).

The format (see ``PolicyConfig`` in crates/controllers/src/policy/mod.rs)::

    {"format": "tcplab-policy/1", "name": "cem-linear", "preset": "aurora",
     "history": 10, "rtt_fraction": 0.5,          # or "interval_ns": 10000000 (>= 1 ms)
     "transform": "aurora_log",                  # or "none"
     "layers": [{"weights": [[...]], "bias": [...], "activation": "linear"}]}

The last layer has one output, Aurora's action (clamped to [-10, 10]); activations are
"linear", "tanh", "relu" or "sigmoid". ``tcplab.gym.presets.Aurora`` with the same history and
interval computes the same observations: a policy trained there runs here unchanged.

``"preset": "orca"`` (Orca, Abbasloo et al., SIGCOMM 2020, as its code computes it):
the flow runs CUBIC, and once CUBIC has first left slow start the policy, every
interval (Orca's report period is 20 ms: ``"interval_ns": 20000000``), reads the last
``history`` (Orca: 10) reports of 7 features and scales CUBIC's window by 4^a, a in
[-1, 1] (``transform`` "none"; crates/controllers/src/policy/orca.rs, the code
``tcplab.gym.presets.Orca`` trains with). On the kernel backend it runs over the
kernel's own CUBIC (policy_cubic.bpf.c, below).

A deployed policy knows what a sender knows (issue 38): its flow's ACK-derived
statistics and srtt, not the path's configured rates. It starts as TCP starts: TCP's
initial window (10 segments) until the flow's first RTT sample (the handshake's), then
the rate that window makes over that round trip, 10 x 1448 B x 8 / srtt (1.93 Mbit/s at
60 ms). Its rate stays within absolute bounds: at least 4 segments per srtt, at most the
rate whose window (2 x rate x srtt) is 1 000 000 segments. A file carrying tcplab.gym's
training-only ``privileged_start_fraction`` (or 0.7's ``start_fraction``) is refused,
naming the field.

FILE may also be an ONNX model (``.onnx``, e.g. from ``torch.onnx.export``): an MLP
graph translated into this format when it is read (tcplab.onnx_policy; needs
``pip install 'tcplab[onnx]'``), so it runs wherever a JSON policy runs.

On the kernel backend the same file drives real Linux TCP: the flow runs the BPF program
tcplab/data/bpf/policy/policy_rate.bpf.c and an agent in the sender's namespace steps the
engine's controller on the socket's measurements (tcplab/backends/kernel/policy_agent.py),
so ``--backend sim,kernel`` compares a policy like any algorithm. An Orca policy's flow
runs tcplab/data/bpf/policy/policy_cubic.bpf.c there instead: the kernel's own CUBIC
(through the kfuncs tcp_cubic.c exports) whose window the agent overrides, as Orca's
kernel patch lets its agent do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcplab import onnx_policy
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
    """The policy file of ``cc`` as a dictionary (ValueError naming what is wrong); an
    ``.onnx`` file translated into the same dictionary (tcplab.onnx_policy)."""
    p = path(cc)
    if not p.is_file():
        raise ValueError(f"'{p}': no such policy file")
    if p.stat().st_size > MAX_BYTES:
        raise ValueError(f"'{p}': larger than {MAX_BYTES} bytes")
    if onnx_policy.is_onnx(p):
        try:
            return onnx_policy.load(p)
        except ValueError as exc:
            raise ValueError(f"'{p}': {exc}") from None
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"'{p}': not a JSON policy file ({exc})") from None
    except RecursionError:
        raise ValueError(
            f"'{p}': nested deeper than a JSON reader goes (Python's recursion limit); "
            "a policy file is an object of a few levels"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"'{p}': a policy file holds a JSON object")
    return data


def underlay(loaded: dict[str, Any]) -> str:
    """The algorithm a (checked) policy's flow runs underneath it, given the policy as
    :func:`load` returns it: its preset's, ``external`` for Aurora (the policy writes rate
    and window), ``cubic`` for Orca (the policy scales CUBIC's window)."""
    return str(engine().policy_underlay(json.dumps(loaded)))


def check(cc: str, given: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems with a ``policy:`` cc: (sub-path, message) pairs."""
    if given:
        return [(f"params.{next(iter(given))}", "a policy takes no params (its file is all)")]
    try:
        data = load(cc)  # its messages name the file already
    except ValueError as exc:
        return [("cc", str(exc))]
    try:
        engine().check_policy(json.dumps(data))
    except ValueError as exc:
        return [("cc", f"{path(cc)}: {exc}")]
    return []
