"""scripts/fidelity.py runs the simulator column at the kernel column's CONFIG_HZ: a spec
without ``[tcp] hz`` takes the value its stored kernel runs recorded, a number given with
``--hz`` wins over it, and a spec that sets its own keeps it (docs/FIDELITY.md finding
39). Fake kernel runs: a directory with a manifest and the recorded ``config_hz``."""

from __future__ import annotations

import json
from pathlib import Path

from script_module import script_module

SPEC = """[experiment]
name = "hz"
duration = "1s"
[bottleneck]
rate = "10Mbps"
[[flows]]
cc = "cubic"
"""


def _spec(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "hz.toml"
    p.write_text(SPEC + extra)
    return p


def _kernel_run(out: Path, hz: int) -> None:
    d = out / "hz" / "kernel-seed1"
    d.mkdir(parents=True)
    (d / "manifest.json").write_text("{}")
    (d / "summary.json").write_text(json.dumps({"engine": {"kernel": {"config_hz": hz}}}))


def test_the_recorded_kernel_hz_is_simulated(tmp_path):
    f = script_module("fidelity")
    _kernel_run(tmp_path / "out", 300)
    assert f.simulated_hz(_spec(tmp_path), tmp_path / "out", "kernel") == 300


def test_a_number_wins_over_the_recorded_hz(tmp_path):
    f = script_module("fidelity")
    _kernel_run(tmp_path / "out", 300)
    assert f.simulated_hz(_spec(tmp_path), tmp_path / "out", "100") == 100


def test_a_spec_that_sets_hz_keeps_it(tmp_path):
    f = script_module("fidelity")
    _kernel_run(tmp_path / "out", 300)
    spec = _spec(tmp_path, "[tcp]\nhz = 1000\n")
    assert f.simulated_hz(spec, tmp_path / "out", "kernel") is None
