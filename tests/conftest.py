import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_engine(monkeypatch):
    """Replace the compiled engine by tests/fake_engine.py for plumbing tests."""
    import fake_engine as fe
    import tcplab
    from tcplab.spec import algorithms

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
