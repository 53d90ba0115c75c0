import fcntl
import os
import signal
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# A shell without job control starts background commands (`cmd &`) with SIGINT ignored,
# and an ignored signal stays ignored across exec: every tcplab the tests start would then
# ignore the Ctrl-C the signal tests send (seen when the suite ran as such a background
# job: the SIGINT case finished its 17 s run and exited 0). A Python handler here is reset
# to the default on exec, so the children get Python's own KeyboardInterrupt handler.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_engine(monkeypatch):
    """Replace the compiled engine by tests/fake_engine.py for plumbing tests."""
    import fake_engine as fe
    import tcplab
    from tcplab.specs import algorithms

    monkeypatch.setitem(sys.modules, "tcplab._engine", fe)
    monkeypatch.setattr(tcplab, "_engine", fe, raising=False)
    algorithms.registry.cache_clear()
    fe.CALLS["run"] = 0
    yield fe
    algorithms.registry.cache_clear()


@pytest.fixture
def write_spec(tmp_path):
    """Write TOML text to a file and return its path."""

    def write(text: str, name: str = "spec.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write


@pytest.fixture
def reproduce_entry(tmp_path):
    """Reproduce one hand-made TUM catalogue entry alone: ``run(name, text)`` writes it as
    ``papers/tum/<name>`` and returns the output directory and claims.csv's rows by quote."""
    import csv

    from tcplab.reproduce import reproduce

    def run(name: str, text: str) -> tuple[Path, dict[str, dict]]:
        root = tmp_path / "papers"
        (root / "tum").mkdir(parents=True, exist_ok=True)
        (root / "tum" / name).write_text(text)
        out = tmp_path / "out"
        reproduce(None, out, root=root, workers=1, say=lambda *_: None)
        with open(out / "claims.csv") as f:
            return out, {r["quote"]: r for r in csv.DictReader(f)}

    return run


# scripts/test.sh runs the suite in two passes at once: every test not marked `kernel` on
# two pytest-xdist workers at idle CPU priority (SCHED_IDLE), and beside them the `kernel`
# tests, one at a time, at normal priority. A kernel run paces real packets through the
# emulator in real time; the idle-priority workers take only the CPU it leaves
# (benches/RESULTS.md, "CI time: the two passes at once"). A test is `kernel` when its file
# is tests/backends/test_kernel*.py or it carries @pytest.mark.kernel.
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name.startswith("test_kernel") and item.path.parent.name == "backends":
            item.add_marker(pytest.mark.kernel)


# One kernel-backend test at a time, machine-wide: the `kernel` tests and the few
# `kernel_subprocess` tests of the other pass (a kernel run in a child process, e.g. from
# the installed wheel) hold this lock for their whole duration. Two kernel runs at once
# would make each other's emulator late, and a run's start (or doctor) sweeps the
# namespaces and BPF programs of dead runs that a kill test has just left on purpose.
KERNEL_LOCK = Path(tempfile.gettempdir()) / "tcplab-tests-kernel.lock"


@pytest.fixture(autouse=True)
def _one_kernel_test_at_a_time(request):
    node = request.node
    if not (node.get_closest_marker("kernel") or node.get_closest_marker("kernel_subprocess")):
        yield
        return
    with open(KERNEL_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(autouse=True)
def _kernel_runs_are_marked(request, monkeypatch):
    """In the parallel pass, a test that creates the kernel backend's namespaces without
    the `kernel` mark fails, naming the mark, instead of running late beside another."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not request.node.get_closest_marker("kernel"):
        from tcplab.backends.kernel import netns

        def refuse(self):
            raise AssertionError(
                f"{request.node.nodeid} runs the kernel backend: mark it "
                "@pytest.mark.kernel so scripts/test.sh runs it with the kernel tests, one at a time"
            )

        monkeypatch.setattr(netns.Pair, "create", refuse)
