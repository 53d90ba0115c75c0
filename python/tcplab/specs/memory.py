"""The memory this process may still take, read from the machine: what the run's memory
stop (tcplab.specs.limits, backends/sim/run.py) compares its estimate with.

Three limits apply to a run, and the smallest is the one it meets first:

- **cgroup.** A container's or a systemd unit's ``memory.max`` (cgroup v2) or
  ``memory.limit_in_bytes`` (v1), on the process's own cgroup and each ancestor: past it
  the kernel's OOM killer ends the run (SIGKILL, no message). What is left is the limit
  less the cgroup's usage, less its inactive file cache, which the kernel reclaims
  before it kills (the "working set" as the kubelet and ``docker stats`` count it).
- **RLIMIT_AS** (``ulimit -v``): past it an allocation fails and the engine aborts
  (exit 134: a 5 GB limit under the old fixed 8 GB estimate). It counts this process's
  address space, so what is left is the soft limit less ``VmSize`` already mapped.
- **MemAvailable** (/proc/meminfo): the kernel's estimate of what can be allocated
  without swapping; past it the machine swaps, then the OOM killer picks a process.

The first two are hard: a run cannot pass them. MemAvailable is not (swap, other
processes ending), so ``$TCPLAB_MEMORY_LIMIT_GB`` may replace it, up or down, but never
raises the limit above a hard one (tcplab.specs.limits.memory_limit). Up to 0.8.0 the
limit was a fixed 8 GB unless that variable said otherwise, whatever the machine.

Each reader returns None where its limit does not apply or cannot be read (no cgroup
memory controller, no limit set, not Linux), so the estimate never fails a run for want
of a file.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

PROC_SELF_CGROUP = Path("/proc/self/cgroup")
PROC_SELF_STATUS = Path("/proc/self/status")
PROC_MEMINFO = Path("/proc/meminfo")
CGROUP_ROOT = Path("/sys/fs/cgroup")
"""Where cgroup v2 is mounted, and cgroup v1's controllers under it (``memory/``)."""
UNLIMITED = 2**62
"""cgroup v1 writes "no limit" as a page-rounded 2**63 - 1; anything this large is none."""


@dataclass(frozen=True)
class Headroom:
    """Bytes a process may still take under one limit, and where that was read."""

    bytes: int
    source: str  # e.g. "RLIMIT_AS 5.0 GB less 1.2 GB mapped"
    hard: bool  # passing it ends the run (cgroup, RLIMIT_AS), not only slows it (MemAvailable)


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


def _kib_field(path: Path, name: str) -> int | None:
    """``Name: N kB`` of a /proc file, in bytes."""
    try:
        for line in path.read_text().splitlines():
            key, _, rest = line.partition(":")
            if key == name:
                return int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _int_file(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= UNLIMITED else value


def _stat_field(path: Path, name: str) -> int:
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_dirs() -> list[tuple[Path, str]]:
    """The process's memory cgroup directories, its own first then each ancestor, with
    the cgroup version's file prefix ("v2" or "v1"). A path the mount does not show (a
    container's view starts below the host's) contributes only the ancestors that exist."""
    try:
        lines = PROC_SELF_CGROUP.read_text().splitlines()
    except OSError:
        return []
    out: list[tuple[Path, str]] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            base, version = CGROUP_ROOT, "v2"
        elif "memory" in controllers.split(","):
            base, version = CGROUP_ROOT / "memory", "v1"
        else:
            continue
        rel = Path(path.lstrip("/"))
        for d in [rel, *rel.parents]:
            where = base / d
            if where.is_dir():
                out.append((where, version))
    return out


def cgroup_headroom() -> Headroom | None:
    """The least left under any memory limit of the process's cgroups (v2 or v1)."""
    best: Headroom | None = None
    for where, version in _cgroup_dirs():
        if version == "v2":
            limit = _int_file(where / "memory.max")
            usage = _int_file(where / "memory.current")
            inactive = _stat_field(where / "memory.stat", "inactive_file")
            name = "memory.max"
        else:
            limit = _int_file(where / "memory.limit_in_bytes")
            usage = _int_file(where / "memory.usage_in_bytes")
            inactive = _stat_field(where / "memory.stat", "total_inactive_file")
            name = "memory.limit_in_bytes"
        if limit is None:
            continue
        used = max(0, (usage or 0) - inactive)
        left = Headroom(
            max(0, limit - used), f"cgroup {name} {_gb(limit)} less {_gb(used)} in use", True
        )
        if best is None or left.bytes < best.bytes:
            best = left
    return best


def rlimit_as_headroom() -> Headroom | None:
    """RLIMIT_AS (soft) less this process's address space (VmSize)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    mapped = _kib_field(PROC_SELF_STATUS, "VmSize") or 0
    return Headroom(max(0, soft - mapped), f"RLIMIT_AS {_gb(soft)} less {_gb(mapped)} mapped", True)


def available_memory() -> Headroom | None:
    """/proc/meminfo's MemAvailable."""
    avail = _kib_field(PROC_MEMINFO, "MemAvailable")
    if avail is None:
        return None
    return Headroom(avail, f"MemAvailable {_gb(avail)}", False)


def headrooms() -> list[Headroom]:
    """Every limit that applies here, read now."""
    return [h for h in (cgroup_headroom(), rlimit_as_headroom(), available_memory()) if h]
