"""A user's BPF program that fails during a simulated run is the user's input, not a
failure of tcplab: exit 2 with the program's own message at its flow group's ``cc``, no
output left behind (docs/usage.md keeps exit 1 for tcplab's own failures). The program is
tests/bpf_programs/spinning_reno.bpf.c: the kernel's verifier accepts it, the
simulator's instruction budget per callback stops it at the first ACK."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tcplab
from tcplab.cli.app import main
from tcplab.errors import SpecError

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
        reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
    ),
]
PROGRAM = Path(__file__).resolve().parents[1] / "bpf_programs" / "spinning_reno.bpf.c"

SPEC = f"""
[experiment]
duration = "2s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"

[[flows]]
cc = "cubic"
rtt = "20ms"

[[flows]]
cc = "bpf:{PROGRAM}"
rtt = "20ms"
count = 2
"""


def test_a_program_that_fails_during_the_run_exits_2_with_its_message(tmp_path, capsys):
    # Before: exit 1 and "tcplab: error: the simulator failed: RuntimeError: flow 1:
    # callback cong_avoid (...) failed at pc 1: instruction budget of 1000000 exhausted",
    # as if tcplab had failed. Flow 1 is the first of group 1.
    spec = tmp_path / "spin.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}: flows[1].cc: bpf:{PROGRAM} failed during the run (flow 1)" in err, err
    assert "callback cong_avoid (spin_cong_avoid)" in err and "instruction budget" in err, err
    assert "internal error" not in err and "simulator failed" not in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_the_api_raises_a_spec_error_at_the_flows_cc():
    import tomllib

    with pytest.raises(SpecError) as err:
        tcplab.run(tomllib.loads(SPEC), report=False)
    assert [p for p, _ in err.value.problems] == ["flows[1].cc"]
