"""``flows[i].bpf.ops``: an object with several ``tcp_congestion_ops`` (as the kernel's
selftests bpf_dctcp.c and tcp_ca_update.c have) runs the one a flow names, by its
variable or its ``.name``; without a name it is refused listing them, and a name it does
not have is refused at ``flows[i].bpf.ops``. The program is tests/bpf_programs/
two_renos.bpf.c: ``two_renos`` is NewReno, ``two_renos_slow`` lets cwnd grow on one ACK
per second of its shared jiffies clock at most."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tcplab
from tcplab.cli.app import main

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
        reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
    ),
]
PROGRAM = Path(__file__).resolve().parents[1] / "bpf_programs" / "two_renos.bpf.c"


def _spec(ops: str | None) -> dict:
    flow: dict = {"cc": f"bpf:{PROGRAM}", "rtt": "40ms"}
    if ops is not None:
        flow["bpf"] = {"ops": ops}
    return {
        "experiment": {"duration": "5s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [flow],
    }


def test_the_named_struct_ops_runs():
    # two_renos (by variable): slow start fills the 20 Mbit/s link within a second.
    fast = tcplab.run(_spec("two_renos"), seed=1).summary_json["flows"][0]
    # two_renos_slow (by .name, here the same): cwnd grows at most 6 times in 5 s from 10
    # segments, each time by one ACK's segments (<= 2 with delayed ACKs), so it stays at
    # or below 22 segments: 22 * 1448 B * 8 / 40 ms = 6.4 Mbit/s at most.
    slow = tcplab.run(_spec("two_renos_slow"), seed=1).summary_json["flows"][0]
    assert (fast["cc"], slow["cc"]) == ("two_renos", "two_renos_slow")
    assert fast["goodput_bps"] > 15e6
    assert slow["goodput_bps"] < 6.4e6


def _refusal(tmp_path, ops: str | None, capsys) -> str:
    bpf = "" if ops is None else f'bpf = {{ ops = "{ops}" }}\n'
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[experiment]\nduration = "5s"\n[bottleneck]\nrate = "20Mbps"\ndelay = "5ms"\n'
        f'[[flows]]\ncc = "bpf:{PROGRAM}"\nrtt = "40ms"\n{bpf}'
    )
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q"]) == 2
    return capsys.readouterr().err


def test_without_a_name_the_choices_are_listed(tmp_path, capsys):
    err = _refusal(tmp_path, None, capsys)
    assert "flows[0].cc" in err and "choose one by name" in err
    assert 'two_renos (.name "two_renos")' in err and "two_renos_slow" in err


def test_a_name_the_object_does_not_have_is_refused_at_bpf_ops(tmp_path, capsys):
    err = _refusal(tmp_path, "dctcp", capsys)
    assert "flows[0].bpf.ops" in err and '"dctcp"' in err and "two_renos_slow" in err
