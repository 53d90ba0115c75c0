"""The installed tool is whole: the wheel built from this tree, installed into a fresh
virtualenv, runs a spec, lists and runs a catalogue entry and answers ``doctor`` from a
directory outside the checkout, and records the commit it was built from.

Building needs the Rust toolchain (as ``pip install .`` does) and installing needs the
package index for the dependencies; the test skips, saying why, where either is missing.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.engine

SPEC = """
[experiment]
duration = "3s"
sample_interval = "100ms"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "bbr"
rtt = "20ms"
"""


def _run(
    cmd: list[str], cwd: Path, timeout: float = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        cmd, cwd=cwd, env=clean | (env or {}), capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` directory of a fresh venv with the wheel of this tree installed."""
    if shutil.which("cargo") is None:
        pytest.skip("building the wheel needs a Rust toolchain (cargo)")
    work = tmp_path_factory.mktemp("wheel")
    # Built with Cargo.toml's `ci` profile (release's optimisation, no LTO, one line of
    # maturin arguments): what is packaged and how it installs are the same as a release
    # wheel's, and scripts/test.sh's `cargo test --profile ci` has already compiled most
    # of it. The release profile's thin LTO over one codegen unit cost ~150 CPU s here,
    # the ci profile ~60 (benches/RESULTS.md, "Build cost").
    built = _run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(work)],
        REPO,
        env={"MATURIN_PEP517_ARGS": "--profile ci"},
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(work.glob("tcplab-*.whl"))
    venv = work / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], work).returncode == 0
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], work)
    if pip.returncode != 0 and "No matching distribution" in pip.stderr + pip.stdout:
        pytest.skip(f"the dependencies cannot be installed here: {pip.stderr[-300:]}")
    assert pip.returncode == 0, pip.stderr[-2000:]
    return venv / "bin"


def test_the_wheel_runs_a_spec_outside_the_checkout(installed, tmp_path):
    (tmp_path / "spec.toml").write_text(SPEC)
    r = _run([str(installed / "tcplab"), "run", "spec.toml", "-o", "out", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["git_commit"], "the wheel records the commit it was built from"
    assert manifest["libraries"]["pyarrow"] and manifest["python"]
    assert (tmp_path / "out" / "report.png").is_file()


def test_the_wheel_carries_the_catalogue(installed, tmp_path):
    r = _run([str(installed / "tcplab"), "reproduce", "--list"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "tum-fig06" in r.stdout and len(r.stdout.splitlines()) >= 40
    r = _run(
        [str(installed / "tcplab"), "reproduce", "acw-fig05d", "--quick", "-o", "cat"],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "cat" / "claims.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and all(r["verdict"] != "not run" for r in rows), rows


def test_the_wheel_carries_the_emulator(installed, tmp_path):
    r = _run([str(installed / "tcplab"), "doctor"], tmp_path)
    assert r.returncode in (0, 2), r.stderr
    line = next(x for x in r.stdout.splitlines() if "emulator" in x)
    assert line.split()[0] == "ok" and "tcplab.backends.kernel.emulator" in line


def test_the_wheel_carries_the_readmes_examples(installed, tmp_path):
    # Before, the wheel lacked experiments/*.toml and the notebook, and "bpf:cubic"
    # failed "not a file", so a wheel user could not copy the README's quickstart.
    r = _run([str(installed / "tcplab"), "examples", "quickstart", "first_hour"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "first_hour.ipynb").is_file()
    r = _run(
        [str(installed / "tcplab"), "run", "quickstart.toml", "-o", "q", "-q"]
        + ["--set", "experiment.duration=3s", "--set", "flows[0].stagger=1s"],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "q" / "report.html").is_file()
    if shutil.which("clang") and Path("/usr/include/bpf/bpf_helpers.h").is_file():
        r = _run([str(installed / "tcplab"), "examples", "bpf_cubic"], tmp_path)
        assert r.returncode == 0, r.stderr
        r = _run([str(installed / "tcplab"), "validate", "bpf_cubic.toml"], tmp_path)
        assert r.returncode == 0, r.stderr
        assert 'cc = "bpf:cubic"' in r.stdout


# A policy that never moves its rate (every weight 0): enough to show that a `policy:`
# flow runs on the kernel from the wheel; what it learns is tests/gym's business.
ZERO_POLICY = {
    "format": "tcplab-policy/1",
    "name": "zero",
    "preset": "aurora",
    "history": 10,
    "rtt_fraction": 0.5,
    "transform": "aurora_log",
    "layers": [{"weights": [[0.0] * 31], "bias": [0.0], "activation": "linear"}],
}

BPF_AND_POLICY_SPEC = """
[experiment]
duration = "3s"
sample_interval = "100ms"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "bpf:cubic"
rtt = "20ms"

[[flows]]
cc = "policy:zero.json"
rtt = "20ms"
"""


def test_the_wheel_carries_the_bpf_loader(installed, tmp_path):
    # Before, the loader was a separate binary a wheel did not hold: from an installed
    # tcplab every bpf: or policy: flow on the kernel exited 2 ("tcplab-bpfload is not
    # built") and doctor said MISSING. It is in the extension now; run bare, it answers
    # with its usage and exit status 2 as the binary does.
    py = str(installed / "python")
    r = _run([py, "-m", "tcplab.bpf_loader"], tmp_path)
    assert r.returncode == 2 and "usage: tcplab-bpfload" in r.stderr, r.stderr
    r = _run([py, "-c", "from tcplab import bpf_loader; print(bpf_loader.loader())"], tmp_path)
    assert r.returncode == 0 and "tcplab.bpf_loader" in r.stdout, r.stdout + r.stderr


# Not marked `kernel` (marked, the wheel would be built and installed a second time for the
# kernel pass): it runs in scripts/test.sh's parallel pass. Its kernel run is a subprocess
# (tests/conftest.py's guard cannot see it), so it is marked `kernel_subprocess`: it waits
# for the kernel pass's current test and holds the others off while it runs.
@pytest.mark.kernel_subprocess
def test_the_wheel_runs_bpf_and_policy_flows_on_the_kernel(installed, tmp_path):
    from kernel_skips import bpf_on_kernel_missing

    why = bpf_on_kernel_missing()
    if why:
        pytest.skip(f"BPF on the kernel backend unavailable: {why}")
    r = _run([str(installed / "tcplab"), "doctor"], tmp_path)
    line = next(x for x in r.stdout.splitlines() if "bpf loader" in x)
    assert line.split()[0] == "ok" and "tcplab.bpf_loader" in line, r.stdout
    (tmp_path / "zero.json").write_text(json.dumps(ZERO_POLICY))
    (tmp_path / "spec.toml").write_text(BPF_AND_POLICY_SPEC)
    r = _run(
        [str(installed / "tcplab"), "run", "spec.toml", "-o", "out", "-q"]
        + ["--backend", "sim,kernel", "--no-report"],
        tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    for backend in ("sim", "kernel"):
        summary = json.loads((tmp_path / "out" / backend / "summary.json").read_text())
        flows = summary["flows"]
        ccs = [f["cc"] for f in flows]
        assert "cubic" in ccs[0] and ccs[1] == "policy:zero", ccs
        assert all(f["goodput_bps"] > 1e6 for f in flows), (backend, flows)
