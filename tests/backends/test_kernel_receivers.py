"""Which algorithm a kernel run's receiving sockets run (run.py ``receiver_cc``): the
flow's own only when it needs ECN, as the simulator's receiver (world::build), else Reno;
never the sender's program and never the host's default. No root needed: the choice is
made before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from tcplab import bpf
from tcplab.backends.kernel import policy_agent
from tcplab.backends.kernel.run import receiver_cc


@pytest.fixture
def programs(monkeypatch):
    """Two compiled programs by their engine refs: one that sets TCP_CONG_NEEDS_ECN
    (flags 0x2, as a DCTCP twin does) and one that sets no flag."""
    made = {
        "/x/ecn.o": bpf.Program("ecn_prog", Path("/x/ecn.o"), (), None, 0x2),
        "/x/plain.o": bpf.Program("plain_prog", Path("/x/plain.o"), (), None, 0),
    }
    monkeypatch.setattr(bpf, "program_at", made.__getitem__)
    return made


def test_a_kernel_module_runs_on_the_receiver_only_when_it_needs_ecn():
    assert receiver_cc({"cc": "cubic"}, None, {}) == "reno"
    assert receiver_cc({"cc": "bbr"}, None, {}) == "reno"
    assert receiver_cc({"cc": "dctcp"}, None, {}) == "dctcp"  # its exact CE echo


def test_a_program_runs_on_the_receiver_only_when_it_needs_ecn(programs):
    names = {("/x/ecn.o", "{}"): "tcplab_1_ecn", ("/x/plain.o", "{}"): "tcplab_1_plain"}
    flow = {"cc": "bpf:whatever"}
    assert receiver_cc(flow, ("/x/plain.o", "{}"), names) == "reno"
    assert receiver_cc(flow, ("/x/ecn.o", "{}"), names) == "tcplab_1_ecn"


def test_a_policy_never_runs_on_the_receiver():
    assert receiver_cc({"cc": "policy:p.json"}, policy_agent.PROGRAM_KEYS["aurora"], {}) == "reno"


def test_the_needs_ecn_flag_is_read_from_the_programs_flags():
    assert bpf.Program("p", Path("/p.o"), (), None, 0x2).needs_ecn
    assert not bpf.Program("p", Path("/p.o"), (), None, 0x1).needs_ecn  # TCP_CONG_NON_RESTRICTED
