"""Caveats a run's numbers carry: conditions under which a result is not what the spec
asked for, recorded in summary.json as ``warnings`` (absent when there are none) and
printed by ``tcplab run``, rather than left to be noticed in the numbers.

Today: a kernel run whose link emulator could not keep up (a 5 Gbit/s run
reported 0.18 utilisation with nothing said). The emulator handles each event at or
after its model time and reports how late (crates/emu/src/emu.rs ``Lateness``); when
many events are handled late the links ran slower than specified. Below that, a run
late enough for the fidelity suite's flag (backends/kernel/assemble.py
``lateness_flag``: a wake-up 4 ms late, or 0.1 % of events over 1 ms) keeps its rates
but not its loss timing: BBR's retransmissions over 60 s were 46-97 in such runs and
154-193 on time, against the simulator's 166-181 (docs/FIDELITY-instruments.md), with
no warning said, so that one is said too.
"""

from __future__ import annotations

from typing import Any

from tcplab.backends.kernel.assemble import lateness_flag

# An event handled more than 1 ms late has delayed its packet by more than a typical
# serialisation time many times over; beyond 1 % of events the link rate the flows saw
# is measurably below the specified one.
LATE_SHARE_LIMIT = 0.01
# Steal (backends/kernel/steal.py) worth naming as the cause: 1 % of the CPU time is
# 20 ms of every 2 s, ten times the lateness the warning counts.
STEAL_LIMIT = 0.01


def emulator_lag(extra: dict[str, Any]) -> str | None:
    """A warning when the kernel backend's emulator fell behind, else None: that its
    links ran slow (over 1 % of events more than 1 ms late), or, short of that, that it
    was late enough to move when TCP reacted (``lateness_flag``)."""
    emulator = extra.get("emulator") or {}
    late = emulator.get("lateness") or {}
    events = late.get("events") or 0
    if events <= 0:
        return None
    over = late.get("over_1ms") or 0
    stolen = emulator.get("host_steal")
    host = (
        f"; the hypervisor held this machine's CPUs for {stolen:.1%} of the run (steal "
        "time), which no setting of tcplab can give back"
        if stolen is not None and stolen >= STEAL_LIMIT
        else ""
    )
    if over / events > LATE_SHARE_LIMIT:
        return (
            f"the link emulator could not keep up: {over / events:.1%} of its {events} "
            f"events were handled more than 1 ms late (mean {late.get('mean_ns', 0) / 1e3:.0f}"
            f" us, max {late.get('max_ns', 0) / 1e6:.1f} ms){host}; the links ran slower "
            "than specified, so throughput and utilisation understate them (lower the "
            "rates, run on a machine with dedicated CPUs, or use the simulator)"
        )
    if why := lateness_flag(late):
        return (
            f"the link emulator was late at times ({'; '.join(why)}){host}: the rates "
            "held, but a late packet moves when TCP reacts (HyStart's delay test, which "
            "packet a full queue drops), so loss counts and the start-up may differ from "
            "an on-time run (docs/FIDELITY-instruments.md); rerun on a quieter machine "
            "to compare them"
        )
    return None


def run_warnings(extra: dict[str, Any]) -> list[str]:
    """Every caveat of a run, from its backend's extra information: the emulator's lag,
    and what the kernel backend found about the kernel (its CONFIG_HZ against the spec's
    tcp.hz, backends/kernel/kconfig.py)."""
    kernel = list((extra.get("kernel") or {}).get("warnings") or [])
    return [w for w in (emulator_lag(extra), *kernel) if w]
