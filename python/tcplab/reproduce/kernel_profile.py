"""The kernel profile an entry's runs follow, in words for the report's entry line.

A reader comparing our BBR with a paper's needs to know which tcp_bbr.c ran: the entry's
``[tcp] kernel`` (docs/BBR_KERNELS.md) and, for entries that run a tcp_bbr.c-based
algorithm, whether BBR's ACK-aggregation allowance (``extra_acked``) was in it, the
change that moves the catalogue most and that no profile before 5.1 has.
"""

from __future__ import annotations

from typing import Any

from tcplab.specs.algorithms import registry
from tcplab.specs.model import DEFAULT_KERNEL, kernel_releases

# "tcp_bbr: adapt cwnd based on ack aggregation estimation" (78dc70ebaa38) entered Linux
# 5.1; crates/cc/src/bbr/kernel.rs `KernelRelease::extra_acked` (of the profiles, only
# 6.18 has it).
EXTRA_ACKED_SINCE = 501


def _ccs(raw: dict[str, Any]) -> set[str]:
    """Every algorithm an entry's runs use: its flows' and its sweep's."""
    names = {f.get("cc") for f in raw.get("flows") or [] if isinstance(f, dict)}
    for axis, values in (raw.get("sweep") or {}).items():
        if axis.endswith(".cc") and isinstance(values, list):
            names.update(values)
    return {n for n in names if isinstance(n, str)}


def _sets_param(raw: dict[str, Any], name: str) -> bool:
    """Whether the entry sets a flow parameter itself (a flow's params or a sweep axis)."""
    flows = raw.get("flows") or []
    if any(name in (f.get("params") or {}) for f in flows if isinstance(f, dict)):
        return True
    return any(axis.endswith(f"params.{name}") for axis in raw.get("sweep") or {})


def profile_line(raw: dict[str, Any]) -> str:
    """``kernel profile 4.17; BBR's extra_acked: off (before 5.1)`` and the like; the
    second part only for an entry that runs a tcp_bbr.c-based algorithm."""
    label = str((raw.get("tcp") or {}).get("kernel", DEFAULT_KERNEL))
    text = f"kernel profile {label}"
    algorithms = registry()
    bbr_based = [c for c in _ccs(raw) if c in algorithms and algorithms[c].param("extra_acked")]
    if not bbr_based:
        return text
    if _sets_param(raw, "kernel"):
        return text + "; BBR's own profile set per flow by the entry (`params.kernel`)"
    if _sets_param(raw, "extra_acked"):
        return text + "; BBR's ACK-aggregation allowance (extra_acked): set by the entry"
    code = kernel_releases().get(label, EXTRA_ACKED_SINCE)
    state = "on" if code >= EXTRA_ACKED_SINCE else "off (the profile predates 5.1)"
    return text + f"; BBR's ACK-aggregation allowance (extra_acked): {state}"
