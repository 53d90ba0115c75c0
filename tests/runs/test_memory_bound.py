"""A run whose queue is unbounded (an unlimited buffer and receive buffer) stops at the
memory limit with a clear error naming the field, instead of aborting on a failed
allocation (4 CUBIC flows at 1 Gbit/s for 900 s ended in exit 134 at 3.1 GB)."""

from __future__ import annotations

import pytest
import tcplab
from tcplab.cli.app import main
from tcplab.errors import SpecError

pytestmark = pytest.mark.engine

SPEC = """
[experiment]
duration = "20s"
[tcp]
receive_buffer = "unlimited"
[bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "unlimited"
[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def test_an_unbounded_queue_stops_the_run_at_the_memory_limit(tmp_path, monkeypatch, capsys):
    # 2 MB at 400 B a packet is 5000 packets. The estimate before the run (a 40 ms pipe of
    # 345 packets, 402 series rows) fits, but CUBIC with no loss to stop it grows its
    # window without bound (it passed 5000 packets held at 11.3 s).
    monkeypatch.setenv("TCPLAB_MEMORY_LIMIT_GB", "0.002")
    spec = tmp_path / "unbounded.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert main(["run", str(spec), "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "bottleneck.buffer" in err and "5000" in err and "TCPLAB_MEMORY_LIMIT_GB" in err, err
    assert not out.exists()


def test_the_run_stops_at_the_machines_limit_without_the_variable(tmp_path, monkeypatch, capsys):
    # Before: with no TCPLAB_MEMORY_LIMIT_GB the stop was at a fixed 8 GB, whatever the
    # machine (under `ulimit -v` 5 GB this run's big brother aborted, exit 134). Now the
    # machine's smallest limit is read when the run starts: here a hard one of 2.5 MB,
    # 80 % of which is 5000 packets.
    from tcplab.specs import memory

    monkeypatch.delenv("TCPLAB_MEMORY_LIMIT_GB", raising=False)
    room = memory.Headroom(2_500_000, "RLIMIT_AS 0.0 GB less 0.0 GB mapped", True)
    monkeypatch.setattr(memory, "headrooms", lambda: [room])
    spec = tmp_path / "unbounded.toml"
    spec.write_text(SPEC)
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "bottleneck.buffer" in err and "(5000)" in err and "RLIMIT_AS" in err, err


def test_a_bounded_buffer_runs_under_the_same_limit(monkeypatch):
    # The same flow with a 1 BDP buffer holds at most ~700 packets: it is not stopped.
    monkeypatch.setenv("TCPLAB_MEMORY_LIMIT_GB", "0.002")
    doc = {
        "experiment": {"duration": "5s"},
        "bottleneck": {"rate": "100Mbps", "delay": "10ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "40ms"}],
    }
    res = tcplab.run(doc, report=False)
    assert res.summary_json["aggregate"]["utilization"] > 0.9


def test_the_api_raises_a_spec_error(monkeypatch):
    monkeypatch.setenv("TCPLAB_MEMORY_LIMIT_GB", "0.002")
    import tomllib

    with pytest.raises(SpecError, match="bottleneck.buffer"):
        tcplab.run(tomllib.loads(SPEC), report=False)
