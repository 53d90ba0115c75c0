import os
import signal
import sys
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


# scripts/test.sh runs the suite in two passes: every test not marked `kernel` on two
# pytest-xdist workers, then the `kernel` tests alone, one at a time. A kernel run paces
# real packets through the emulator in real time; a second worker's simulation on the
# other core of a 2-core machine would make it late. A test is `kernel` when its file is
# tests/backends/test_kernel*.py or it carries @pytest.mark.kernel.
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name.startswith("test_kernel") and item.path.parent.name == "backends":
            item.add_marker(pytest.mark.kernel)


@pytest.fixture(autouse=True)
def _kernel_runs_are_marked(request, monkeypatch):
    """In the parallel pass, a test that creates the kernel backend's namespaces without
    the `kernel` mark fails, naming the mark, instead of running late beside another."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not request.node.get_closest_marker("kernel"):
        from tcplab.backends.kernel import netns

        def refuse(self):
            raise AssertionError(
                f"{request.node.nodeid} runs the kernel backend: mark it "
                "@pytest.mark.kernel so scripts/test.sh runs it alone"
            )

        monkeypatch.setattr(netns.Pair, "create", refuse)
