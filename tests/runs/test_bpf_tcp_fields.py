"""The tcp_sock fields of loss recovery that cong_control programs read for their own
cwnd reduction (the kernel's bpf_cc_cubic selftest does PRR itself from them):
high_seq, prr_delivered, prr_out, reordering. A program reading them was refused for
lack of the fields; tests/bpf_programs/recovery_fields.bpf.c prints them and
this test checks what it printed against the kernel's tcp_input.c by hand."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import tcplab
from tcplab import bpf, bpf_loader

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
        reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
    ),
]
PROGRAM = Path(__file__).resolve().parents[1] / "bpf_programs" / "recovery_fields.bpf.c"


def test_recovery_fields_mean_what_they_mean_in_the_kernel(tmp_path):
    spec = {
        "experiment": {"duration": "10s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": f"bpf:{PROGRAM}", "rtt": "40ms", "count": 2, "stagger": "1s"}],
    }
    tcplab.run(spec, out=tmp_path / "run", report=False)
    texts = [
        re.sub(r"^ *\d+\.\d+ recovery_fields: ", "", line)
        for line in (tmp_path / "run" / "bpf_printk.log").read_text().splitlines()
    ]
    # A fresh socket's tp->reordering is net.ipv4.tcp_reordering, 3.
    assert [t for t in texts if t.startswith("init")] == ["init reordering 3"] * 2
    # tcp_enter_recovery -> tcp_init_cwnd_reduction sets high_seq = snd_nxt and
    # prr_delivered = prr_out = 0, then tcp_set_ca_state(Recovery) calls set_state.
    entries = [t for t in texts if t.startswith("recovery")]
    assert entries, texts[:10]
    assert set(entries) == {"recovery high_seq_is_snd_nxt 1 prr_delivered 0 prr_out 0"}
    # PRR sends during the reduction: prr_out grows from 0 within a recovery.
    grown = [int(t.split()[-1]) for t in texts if t.startswith("prr_out")]
    assert grown and grown[0] >= 1 and grown == sorted(grown), grown


@pytest.mark.skipif(
    bpf_loader.available() is not None, reason=f"no kernel loader: {bpf_loader.available()}"
)
def test_the_kernel_verifier_accepts_the_same_program():
    # The fields are the real tcp_sock's (vmlinux.h): the kernel loads the same object.
    obj = bpf.object_for(PROGRAM)
    assert bpf_loader.verify(obj.read_bytes()) is None
