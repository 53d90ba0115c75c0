"""The hypervisor's share of this machine's CPU time during a kernel run ("steal").

A virtual machine's vCPUs stop whenever the host runs something else; the guest sees it
only as the ``steal`` column of /proc/stat (proc(5): "stolen time, which is the time spent
in other operating systems when running in a virtualized environment"). The link emulator
is a real-time process, so while its vCPU is stolen it wakes late and its links serve
late, whatever the guest's own load: on 2026-12-02 this project's 2-vCPU VM showed 14-25 %
steal (vmstat) and every fidelity run flagged for lateness at a 1-minute load of 0.5
(docs/FIDELITY.md, finding 27). The share is recorded with every kernel run
(summary.json's ``engine.emulator.host_steal``) and named in the lag warning (analysis/caveats.py), so a
late run says whether its own machine or the host held it up.
"""

from __future__ import annotations

from pathlib import Path

STAT = Path("/proc/stat")


def read(stat: Path = STAT) -> tuple[int, int] | None:
    """(steal ticks, all ticks) of the aggregate ``cpu`` line, or None where there is no
    such line (not Linux, or a kernel older than 2.6.11 that has no steal column)."""
    try:
        first = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not first or first[0] != "cpu" or len(first) < 9:
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
    # already counted in user and nice (proc(5)), so the sum stops at steal.
    ticks = [int(v) for v in first[1:9]]
    return ticks[7], sum(ticks)


def share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The fraction of all CPU time between two readings that was stolen, or None
    without both readings (or with no time between them)."""
    if before is None or after is None:
        return None
    total = after[1] - before[1]
    if total <= 0:
        return None
    return (after[0] - before[0]) / total
