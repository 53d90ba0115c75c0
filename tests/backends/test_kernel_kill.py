"""SIGKILL of kernel runs that use an AQM with ECN, a policer, a topology, or a BPF
program (also at the moment its loader registers it): nothing is left behind that
``tcplab doctor`` and the next run do not remove (issue 45). Root only; skipped
elsewhere with the reason (kernel_skips)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from kernel_skips import NEEDS_BPF_ON_KERNEL
from tcplab.backends.kernel import bpf_ops, netns, requirements
from tcplab.cli.app import main

REPO = Path(__file__).resolve().parents[2]
_missing = requirements.missing()
NEEDS_KERNEL = pytest.mark.skipif(
    bool(_missing),
    reason="kernel backend unavailable here: " + "; ".join(r.detail for r in _missing),
)
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
SPECS = {
    "aqm-ecn": REPO / "experiments" / "kernel-spec" / "k02-codel-ecn-cubic.toml",
    "policer": REPO / "experiments" / "kernel-spec" / "k04-policer-bbr.toml",
    "topology": REPO / "experiments" / "kernel-spec" / "k06-parking-lot.toml",
    "bpf": REPO / "experiments" / "bpf_cubic.toml",
}


def _start(spec: Path, tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    args = [sys.executable, "-m", "tcplab", "run", str(spec), "-o", str(tmp_path / "out")]
    args += ["--backend", "kernel", "--set", "experiment.duration=30s", "-q", "--no-report"]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait(cond, timeout: float = 60.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def _processes_of(pid: int) -> list[int]:
    """The run's helpers: emulator and agents (their command lines name its work
    directory) and its BPF loader (a child named tcplab-bpfload)."""
    mark = f"tcplab-kernel-{pid}-".encode()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            status = (d / "status").read_text()
            ppid = int(next(x for x in status.splitlines() if x.startswith("PPid:")).split()[1])
            if mark in (d / "cmdline").read_bytes() or ppid == pid:
                found.append(int(d.name))
        except (OSError, StopIteration, ValueError):
            pass
    return found


def _leftovers(pid: int) -> dict[str, list]:
    """Everything a run of process ``pid`` could leave: namespaces, work directories,
    BPF records and registered programs (renamed tl<pid><k>), helper processes."""
    return {
        "namespaces": [n for n in netns.list_ours() if n.startswith(f"tcplab-{pid}-")],
        "work": list(Path(tempfile.gettempdir()).glob(f"tcplab-kernel-{pid}-*")),
        "records": list(bpf_ops.STATE_DIR.glob(f"bpf-{pid}.json")),
        "programs": [n for n in AVAILABLE.read_text().split() if n.startswith(f"tl{pid}")],
        "processes": _processes_of(pid),
    }


def _kill_and_check(p: subprocess.Popen, capsys, built: bool = True) -> None:
    p.kill()
    p.wait(10)
    # Helpers die with their parent (PR_SET_PDEATHSIG); the loader, its pipe closed,
    # unregisters what it holds and exits.
    assert _wait(lambda: _processes_of(p.pid) == [], 10), _leftovers(p.pid)
    # No finally survives SIGKILL: the named namespaces and the work directory stay for
    # doctor (or the next kernel run) to remove.
    before = _leftovers(p.pid)
    assert not built or (before["namespaces"] and before["work"]), before
    assert main(["doctor"]) in (0, 1)  # doctor's cleanup, whatever else it finds
    capsys.readouterr()
    left = _leftovers(p.pid)
    assert all(v == [] for v in left.values()), left
    assert not (Path(p.args[p.args.index("-o") + 1])).exists()


@pytest.mark.parametrize("case", ["aqm-ecn", "policer", "topology"])
@NEEDS_KERNEL
@pytest.mark.engine
def test_a_killed_kernel_run_leaves_nothing_after_doctor(case, tmp_path, capsys):
    p = _start(SPECS[case], tmp_path)
    built = _wait(lambda: len(_leftovers(p.pid)["namespaces"]) == 2 and _processes_of(p.pid))
    assert built, f"{case}: the run never built its namespaces ({p.poll()})"
    time.sleep(1.0)  # traffic flowing through the qdisc, policer or second link
    assert p.poll() is None, p.stderr.read().decode()
    _kill_and_check(p, capsys)


@pytest.mark.parametrize("moment", ["registering", "running"])
@NEEDS_BPF_ON_KERNEL[1]
@pytest.mark.engine
def test_a_killed_bpf_run_leaves_no_program_registered(moment, tmp_path, capsys):
    p = _start(SPECS["bpf"], tmp_path)

    def loader_started() -> bool:
        return any(
            Path(f"/proc/{c}/comm").read_text().strip() == "tcplab-bpfload"
            for c in _processes_of(p.pid)
            if Path(f"/proc/{c}/comm").exists()
        )

    if moment == "registering":
        # The instant the loader process exists, before it has registered anything or
        # the run has written its record.
        assert _wait(loader_started, 120), f"no loader appeared ({p.poll()})"
        # (The loader runs before the namespaces are built: nothing of them yet.)
        _kill_and_check(p, capsys, built=False)
        return
    else:
        assert _wait(lambda: _leftovers(p.pid)["programs"] != [], 120), "never registered"
        record = bpf_ops.STATE_DIR / f"bpf-{p.pid}.json"
        assert _wait(record.exists, 10)
        assert json.loads(record.read_text())["pid"] == p.pid
        time.sleep(1.0)
    _kill_and_check(p, capsys)


@NEEDS_KERNEL
@pytest.mark.engine
def test_a_script_terminated_mid_run_removes_its_namespaces(tmp_path):
    """SIGTERM to a script that drives the kernel backend through the Python API, with
    Python's default SIGTERM disposition (no tcplab command around it): the run unwinds
    and removes its namespaces, work directory and helpers itself, before the process
    exits, with no doctor or later run to sweep them (a terminated scripts/fidelity.py
    left its two namespaces behind)."""
    script = (
        "import sys, tcplab\n"
        "tcplab.run(sys.argv[1], sys.argv[2], report=False,\n"
        "           overrides={'experiment.backend': 'kernel', 'experiment.duration': '30s'})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    args = [sys.executable, "-c", script, str(SPECS["aqm-ecn"]), str(tmp_path / "out")]
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    built = _wait(lambda: len(_leftovers(p.pid)["namespaces"]) == 2 and _processes_of(p.pid))
    assert built, f"the run never built its namespaces ({p.poll()}): {p.stderr.read()!r}"
    time.sleep(1.0)
    p.terminate()
    assert p.wait(30) != 0  # interrupted, not finished
    left = _leftovers(p.pid)
    assert all(v == [] for v in left.values()), left
    assert not (tmp_path / "out").exists()
