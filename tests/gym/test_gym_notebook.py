"""examples/gym_cem.ipynb runs from top to bottom with a tiny budget (2 CEM iterations
of 4 candidates, one episode each, one validation episode, one held-out seed), executed
by nbclient in a fresh kernel: the example's training loop and evaluation against CUBIC
and BBR work."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebooks import assert_committed_without_outputs, run_with_parameters

nbformat = pytest.importorskip("nbformat", reason="the dev extra's nbformat is not installed")
nbclient = pytest.importorskip("nbclient", reason="the dev extra's nbclient is not installed")
pytest.importorskip("gymnasium", reason="the gym extra's gymnasium is not installed")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "gym_cem.ipynb"
pytestmark = pytest.mark.engine


def test_the_notebook_is_committed_without_outputs():
    assert_committed_without_outputs(nbformat, NOTEBOOK)


def test_the_gym_notebook_runs(tmp_path):
    pytest.importorskip("tcplab._engine", reason="the simulator is not built")
    _, texts = run_with_parameters(
        nbformat,
        nbclient,
        NOTEBOOK,
        [
            "from pathlib import Path",
            f"ROOT = Path({str(REPO)!r})",
            "ITERATIONS = 2",
            "POPULATION = 4",
            "EPISODES = 1",
            "VALIDATION = 1",
            "WORKERS = 1",
            "EVAL_SEEDS = [1001]",
        ],
        tmp_path,
    )
    table = [t for t in texts if "algorithm" in t and "goodput_mbps" in t]
    assert table, texts
    for name in ("policy", "cubic", "bbr"):
        assert name in table[0]


def test_the_copied_gym_bundle_trains_outside_the_checkout(tmp_path):
    # Issue 38: the RL path shipped nothing a wheel user could run. `tcplab examples gym`
    # copies the script, its notebook and its scenario files; the script finds them
    # beside itself, with no checkout.
    import subprocess
    import sys

    from tcplab.cli.app import main

    assert main(["examples", "gym", "-o", str(tmp_path)]) == 0
    gym = tmp_path / "gym"
    names = sorted(p.name for p in gym.iterdir())
    assert names == [
        "gym_cem.ipynb",
        "gym_cem.py",
        "gym_ppo.py",
        "heldout.toml",
        "preset.toml",
        "preset_orca.py",
        "train.toml",
    ]
    res = subprocess.run(
        [sys.executable, "gym_cem.py", "--iterations", "1", "--population", "2"]
        + ["--episodes", "1", "--workers", "1", "--eval-seeds", "1001", "-o", "p.json"],
        cwd=gym,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    assert (gym / "p.json").is_file()
    for name in ("policy", "cubic", "bbr"):
        assert name in res.stdout
