"""``bpf_printk`` on the kernel backend (backends/kernel/printk.py): the lines a run's
programs print are read from a trace instance of the run's own while it runs, attributed
to the program by the ``bpf_prog_<tag>_...`` frame of each line's stack, and written to
the run directory's bpf_printk.log in the simulator's format (seconds since the run's
start, the program's name, its text), listed in the manifest. The parser's test runs
everywhere; the run's needs root, the kernel backend, the loader, BTF, tracefs and clang
(tests/bpf_programs/chatty_reno.bpf.c), and is skipped elsewhere with the reason."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tcplab.backends.kernel import printk

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "bpf_programs" / "chatty_reno.bpf.c"

# trace_pipe of an instance with options/stacktrace, as this kernel (6.18) prints it:
# an event, a format with its own trailing newline, a line of another program, and a
# frame of ours deeper in the stack than the printk helpers.
PIPE = """\
          python-29487   [000] b..21 23191.155393: bpf_trace_printk: init cwnd 10
          python-29487   [000] b..21 23191.165039: <stack trace>
 => trace_event_raw_event_bpf_trace_printk
 => bpf_trace_printk
 => bpf_prog_adcac82ab0d395eb_cr_init
 => bpf__tcp_congestion_ops_init
 => tcp_init_congestion_control
           rustc-29738   [001] .Ns21 23193.336060: bpf_trace_printk: loss at cwnd 50

           rustc-29738   [001] .Ns21 23193.336101: <stack trace>
 => bpf_trace_printk
 => bpf_prog_0123456789abcdef_cr_ssthresh
 => tcp_enter_recovery
          <idle>-0       [001] ..s21 23194.000001: bpf_trace_printk: someone else's
          <idle>-0       [001] ..s21 23194.000002: <stack trace>
 => bpf_prog_ffffffffffffffff_other
"""


def test_trace_pipe_lines_are_parsed_with_their_program_tag():
    got = printk.parse(PIPE.splitlines())
    assert got == [
        (23191_155393000, "init cwnd 10", "adcac82ab0d395eb"),
        (23193_336060000, "loss at cwnd 50", "0123456789abcdef"),
        (23194_000001000, "someone else's", "ffffffffffffffff"),
    ]


def _why_not() -> str:
    from tcplab import bpf_loader
    from tcplab.backends.kernel import requirements

    why = "; ".join(r.detail for r in requirements.missing()) or bpf_loader.available()
    if not why and not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        why = "clang or libbpf's headers missing"
    if not why and not (printk.TRACEFS.is_dir()):
        why = f"no {printk.TRACEFS}"
    return why or ""


LINE = re.compile(r" *(-?\d+\.\d{6}) chatty_reno: (.*)")


@pytest.mark.engine
def test_a_kernel_runs_printk_lines_are_in_the_run_directory(tmp_path):
    why = _why_not()
    if why:
        pytest.skip(f"bpf_printk on the kernel backend unavailable: {why}")
    import tcplab

    spec = {
        "experiment": {"duration": "5s", "sample_interval": "100ms", "backend": "kernel"},
        "tcp": {"hz": 250},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "0.5bdp"},
        "flows": [{"cc": f"bpf:{PROGRAM}", "rtt": "40ms", "count": 2, "stagger": "2s"}],
    }
    tcplab.run(spec, out=tmp_path / "run", report=False)
    log_path = tmp_path / "run" / "bpf_printk.log"
    log = log_path.read_text().splitlines()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "bpf_printk.log" in manifest["sha256"]
    parsed = [LINE.fullmatch(line) for line in log if not line.startswith("#")]
    assert parsed and all(parsed), log[:5]
    times = [float(m.group(1)) for m in parsed]
    texts = [m.group(2) for m in parsed]
    assert times == sorted(times)
    # Every socket running the program prints its initial window (tcp.initial_cwnd 10)
    # once when it starts: each flow's sender, one per flow, as in the simulator (the
    # receivers run Reno: the program does not need ECN; run.py receiver_cc). The second
    # flow's start two seconds after the first's (stagger) shows in the times: a
    # handshake's RTT after each start, well within 0.5 s.
    inits = [t for t, x in zip(times, texts) if x == "init cwnd 10"]
    assert len(inits) == 2, texts[:8]
    assert -0.1 < inits[0] < 0.5 and 2.0 < inits[1] < 2.5, inits
    # Nothing after the run's end (5 s): the closing sockets' timeouts, ~0.2 s later,
    # called ssthresh and printed "loss" lines the simulator's run never has.
    assert max(times) <= 5.0, times[-5:]
    # Reno on half a BDP of buffer loses packets: loss lines, their newline dropped, at
    # a cwnd above the initial window, each after the first socket's start.
    losses = [(t, int(x.rsplit(" ", 1)[1])) for t, x in zip(times, texts) if x.startswith("loss")]
    assert losses and all(c > 10 and t > inits[0] for t, c in losses), losses
    assert not any(x.endswith("\n") or not x for x in texts)
    # The run's trace instance is gone.
    assert not (printk.TRACEFS / "instances" / f"{printk.INSTANCE_PREFIX}{os.getpid()}").exists()


def test_doctor_removes_the_trace_instance_of_a_dead_run(capsys):
    why = _why_not()
    if why:
        pytest.skip(f"bpf_printk on the kernel backend unavailable: {why}")
    import subprocess
    import sys

    from tcplab.cli.app import main

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    # tracefs mounted (as a run mounts it), then an instance as a dead run left it.
    printk.remove_instance(printk._make_instance())
    stale = printk.TRACEFS / "instances" / f"{printk.INSTANCE_PREFIX}{dead}"
    stale.mkdir()
    assert main(["doctor"]) == 0
    assert f"removed trace instances of dead runs: {stale.name}" in capsys.readouterr().out
    assert not stale.exists()
