"""A BPF program's ``bpf_printk`` lines (the kernel's trace_pipe) are written to the run
directory as bpf_printk.log, with the simulated time and the program's name (before,
they were collected by the engine and then thrown away)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import tcplab

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
        reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
    ),
]
PROGRAM = Path(__file__).resolve().parents[1] / "bpf_programs" / "chatty_reno.bpf.c"


def _spec(cc: str) -> dict:
    return {
        "experiment": {"duration": "10s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "40ms", "count": 2, "stagger": "1s"}],
    }


LINE = re.compile(r" *(\d+\.\d{6}) chatty_reno: (.*)")


def test_printk_lines_are_written_with_time_and_program(tmp_path):
    tcplab.run(_spec(f"bpf:{PROGRAM}"), out=tmp_path / "run", report=False)
    log = (tmp_path / "run" / "bpf_printk.log").read_text().splitlines()
    parsed = [LINE.fullmatch(line) for line in log]
    assert all(parsed), log[:5]
    times = [float(m.group(1)) for m in parsed]
    texts = [m.group(2) for m in parsed]
    # One line per socket at init, with the initial window (tcp.initial_cwnd = 10), the
    # second flow's one second after the first's (stagger); each before that flow's first
    # loss line.
    inits = [t for t, x in zip(times, texts) if x.startswith("init")]
    assert [x for x in texts if x.startswith("init")] == ["init cwnd 10", "init cwnd 10"]
    assert inits[0] < 0.2 and 1.0 <= inits[1] < 1.2, inits
    # Two Reno flows on a 1 BDP buffer for 10 s lose packets: at least one loss line,
    # its newline dropped as trace_pipe does, and a cwnd above the initial window.
    losses = [int(x.split()[-1]) for x in texts if x.startswith("loss at cwnd")]
    assert losses and all(c > 10 for c in losses), texts
    assert times == sorted(times) and times[-1] <= 10.0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "bpf_printk.log" in manifest["sha256"]


def test_a_run_without_printk_has_no_log(tmp_path):
    tcplab.run(_spec("bpf:reno"), out=tmp_path / "run", report=False)
    assert not (tmp_path / "run" / "bpf_printk.log").exists()


def test_the_log_is_the_same_for_the_same_seed(tmp_path):
    a = tcplab.run(_spec(f"bpf:{PROGRAM}"), out=tmp_path / "a", report=False, seed=2)
    b = tcplab.run(_spec(f"bpf:{PROGRAM}"), out=tmp_path / "b", report=False, seed=2)
    assert a.manifest["sha256"]["bpf_printk.log"] == b.manifest["sha256"]["bpf_printk.log"]
