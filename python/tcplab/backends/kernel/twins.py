"""Linux modules the running kernel lacks, run as tcplab's shipped BPF twins (issue 40).

A kernel offers the congestion controls it was built with (here: reno, cubic, bbr);
tcplab's native ports of the other Linux modules (westwood, vegas, htcp, ...) could not be
held against Linux's TCP on it. Each has a twin in ``tcplab/data/bpf/examples/NAME.bpf.c``
that gives the native port's run bit for bit in the simulator
(crates/controllers/tests/bpf_flows.rs), so when a flow asks the kernel backend for an
algorithm the kernel does not offer and a twin exists, the run registers the twin
(bpf_ops, like any ``bpf:`` flow) and says so: the flow keeps the algorithm's name in
summary.json (so ``--backend sim,kernel`` compares like with like), the run's warnings
name the twin, and ``engine.kernel.twins`` records which flows ran one. A kernel that
offers the module runs its own, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "bpf" / "examples"


def twin_source(cc: str) -> Path | None:
    """The shipped BPF twin of the native algorithm ``cc``, or None."""
    if not cc or "/" in cc or ":" in cc or cc.startswith("."):
        return None
    src = EXAMPLES / f"{cc}.bpf.c"
    return src if src.is_file() else None


def twins(spec: Any, offered: list[str]) -> dict[int, Path]:
    """The flows of ``spec`` whose algorithm the kernel does not offer but tcplab ships
    as a BPF twin: flow index -> the twin's source."""
    out = {}
    for i, f in enumerate(spec.flows):
        src = twin_source(f.cc) if f.cc not in offered else None
        if src is not None:
            out[i] = src
    return out


# Twins written in fixed point where the port uses f64 (BPF has no floating point):
# in the simulator they give the port's statistics within stated tolerances
# (crates/controllers/tests/bpf_flows.rs), not its run bit for bit.
FIXED_POINT = frozenset({"ledbat", "copa", "vivace"})


def note(flows: list[int], cc: str, src: Path) -> str:
    """The run's warning for the flows that ran ``cc``'s twin."""
    which = ", ".join(f"flows[{i}]" for i in flows)
    same = (
        "the native port's statistics within tolerances in the simulator, fixed point"
        if cc in FIXED_POINT
        else "the native port's run in the simulator"
    )
    return (
        f"{which}: this kernel does not offer {cc}; ran tcplab's BPF twin bpf:{cc} "
        f"({src.name}, {same}) through Linux's TCP"
    )
