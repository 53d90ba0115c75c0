"""examples/first_hour.ipynb runs from top to bottom: executed by nbclient in
a fresh kernel with its parameters cell replaced by shorter experiments (the quickstart
for 3 s with its second BBR flow at 1 s, the buffer sweep for 2 s per run), writing into a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebooks import assert_committed_without_outputs, run_with_parameters

nbformat = pytest.importorskip("nbformat", reason="the dev extra's nbformat is not installed")
nbclient = pytest.importorskip("nbclient", reason="the dev extra's nbclient is not installed")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "first_hour.ipynb"
pytestmark = pytest.mark.engine


def test_the_notebook_is_committed_without_outputs():
    assert_committed_without_outputs(nbformat, NOTEBOOK)


def test_the_first_hour_notebook_runs(tmp_path):
    pytest.importorskip("tcplab._engine", reason="the simulator is not built")
    nb, texts = run_with_parameters(
        nbformat,
        nbclient,
        NOTEBOOK,
        [
            "from pathlib import Path",
            f"SPEC = Path({str(REPO / 'experiments' / 'quickstart.toml')!r})",
            f"SWEEP_SPEC = Path({str(REPO / 'experiments' / 'buffer_sweep.toml')!r})",
            f"OUT = Path({str(tmp_path / 'out')!r})",
            'OVERRIDES = {"experiment.duration": "3s", "flows[0].stagger": "1s"}',
            'SWEEP_OVERRIDES = {"experiment.duration": "2s"}',
        ],
        tmp_path,
    )
    assert any(t.startswith("<Result 'quickstart: 2 x BBR vs CUBIC': 3 flows") for t in texts)
    # 4 buffer sizes x 3 seeds, two flows each
    assert any(
        t.startswith("<SweepData") and "12 runs over bottleneck.buffer [bdp]" in t for t in texts
    ), texts
    # Both figure cells drew into the notebook: importing tcplab leaves the kernel's inline
    # backend alone (it used to switch it to Agg, and the last figure came out empty).
    figures = [c for c in nb.cells if c.cell_type == "code" and "plt.subplots" in c.source]
    assert len(figures) == 2
    for cell in figures:
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, cell.source
    assert (tmp_path / "out" / "run" / "manifest.json").is_file()
    assert not (REPO / "examples" / "first_hour_out").exists()
