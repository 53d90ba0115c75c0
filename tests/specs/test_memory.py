"""The memory stop's limit is read from the machine (tcplab.specs.memory): the cgroup's
limit, RLIMIT_AS and MemAvailable, the smallest, each read from files and calls the tests
point elsewhere. Before, it was a fixed 8 GB estimate: under a 5 GB address-space limit
an unlimited buffer's run still ended in an allocation abort (exit 134)."""

from __future__ import annotations

import resource

import pytest
from tcplab.specs import limits, memory

GB = 10**9


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine with nothing to read: no cgroup files, no RLIMIT_AS, no meminfo. Tests
    write what they need into it (``machine / "proc" / ...``, ``machine / "cgroup"``)."""
    proc = tmp_path / "proc"
    proc.mkdir()
    monkeypatch.setattr(memory, "PROC_SELF_CGROUP", proc / "cgroup")
    monkeypatch.setattr(memory, "PROC_SELF_STATUS", proc / "status")
    monkeypatch.setattr(memory, "PROC_MEMINFO", proc / "meminfo")
    monkeypatch.setattr(memory, "CGROUP_ROOT", tmp_path / "cgroup")
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    )
    monkeypatch.delenv(limits.MEMORY_LIMIT_ENV, raising=False)
    return tmp_path


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _rlimit_as(monkeypatch, soft: int) -> None:
    real = resource.getrlimit
    monkeypatch.setattr(
        resource,
        "getrlimit",
        lambda which: (
            (soft, resource.RLIM_INFINITY) if which == resource.RLIMIT_AS else real(which)
        ),
    )


def test_under_a_5_gb_address_space_limit_the_limit_is_below_5_gb(machine, monkeypatch):
    # The case: `ulimit -v` 5 GB, 22 GB free. Before, the limit was 8 GB, so the
    # engine's stop (max_packets_held = limit / 400 B) came after the allocation abort.
    _write(machine / "proc" / "meminfo", "MemTotal: 24000000 kB\nMemAvailable: 22000000 kB\n")
    _write(machine / "proc" / "status", "Name: python\nVmSize:   1000000 kB\nVmRSS: 1 kB\n")
    _rlimit_as(monkeypatch, 5 * GB)
    limit, whence = limits.memory_limit()
    assert limit == int((5 * GB - 1_024_000_000) * limits.MEMORY_SHARE)
    assert "RLIMIT_AS 5.0 GB less 1.0 GB mapped" in whence and "hard limit" in whence


def test_cgroup_v2_limits_count_every_ancestor_and_leave_out_reclaimable_cache(machine):
    _write(machine / "proc" / "cgroup", "0::/user.slice/run.scope\n")
    leaf = machine / "cgroup" / "user.slice" / "run.scope"
    _write(leaf / "memory.max", "max\n")
    _write(machine / "cgroup" / "user.slice" / "memory.max", f"{3 * GB}\n")
    _write(machine / "cgroup" / "user.slice" / "memory.current", f"{2 * GB}\n")
    _write(machine / "cgroup" / "user.slice" / "memory.stat", f"anon 1\ninactive_file {GB}\n")
    room = memory.cgroup_headroom()
    # 3 GB less (2 GB in use - 1 GB of inactive file cache the kernel reclaims first)
    assert room is not None and room.bytes == 2 * GB and room.hard
    assert "memory.max 3.0 GB" in room.source


def test_cgroup_v1_unlimited_is_no_limit_and_a_set_one_counts(machine):
    # cgroup v1 spells "no limit" as a page-rounded 2**63 - 1; the process's own path
    # may be missing from a container's view, whose root is then the one read.
    _write(machine / "proc" / "cgroup", "5:pids:/x\n4:memory:/process_api/abc\n0::/\n")
    v1 = machine / "cgroup" / "memory"
    _write(v1 / "memory.limit_in_bytes", "9223372036854771712\n")
    assert memory.cgroup_headroom() is None
    _write(v1 / "memory.limit_in_bytes", f"{4 * GB}\n")
    _write(v1 / "memory.usage_in_bytes", f"{GB}\n")
    _write(v1 / "memory.stat", "cache 5\ntotal_inactive_file 0\n")
    room = memory.cgroup_headroom()
    assert room is not None and room.bytes == 3 * GB
    assert "memory.limit_in_bytes" in room.source


def test_the_smallest_limit_wins_and_is_named(machine, monkeypatch):
    _write(machine / "proc" / "meminfo", "MemAvailable: 2000000 kB\n")  # 2.048 GB
    _write(machine / "proc" / "status", "VmSize: 0 kB\n")
    _rlimit_as(monkeypatch, 10 * GB)
    limit, whence = limits.memory_limit()
    assert limit == int(2_048_000_000 * limits.MEMORY_SHARE)
    assert "MemAvailable 2.0 GB" in whence and limits.MEMORY_LIMIT_ENV in whence


def test_the_variable_replaces_memavailable_but_not_a_hard_limit(machine, monkeypatch):
    _write(machine / "proc" / "meminfo", "MemAvailable: 2000000 kB\n")
    _write(machine / "proc" / "status", "VmSize: 0 kB\n")
    _rlimit_as(monkeypatch, 10 * GB)
    monkeypatch.setenv(limits.MEMORY_LIMIT_ENV, "6")  # above MemAvailable: swap, say
    assert limits.memory_limit() == (6 * GB, f"{limits.MEMORY_LIMIT_ENV}=6")
    monkeypatch.setenv(limits.MEMORY_LIMIT_ENV, "20")  # above RLIMIT_AS: never
    limit, whence = limits.memory_limit()
    assert limit == int(10 * GB * limits.MEMORY_SHARE) and "RLIMIT_AS" in whence


def test_a_machine_that_says_nothing_keeps_the_old_default(machine):
    limit, whence = limits.memory_limit()
    assert limit == int(limits.DEFAULT_MEMORY_LIMIT_GB * GB) and "could not be read" in whence


def test_the_estimate_before_the_run_names_the_machines_limit(machine, monkeypatch, fake_engine):
    # 1000 Gbit/s, 40 ms, 1 BDP: about 2.7 GB estimated (tests/specs/test_limits.py),
    # refused under a 2 GB address space, the limit's source in the message.
    from test_limits import problems, raw

    _write(machine / "proc" / "status", "VmSize: 0 kB\n")
    _rlimit_as(monkeypatch, 2 * GB)
    p = problems(raw(rate="1000Gbps"))
    assert "about 2.7 GB" in p["bottleneck"] and "limit is 1.6 GB" in p["bottleneck"]
    assert "RLIMIT_AS 2.0 GB" in p["bottleneck"]
