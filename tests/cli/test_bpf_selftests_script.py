"""scripts/bpf_selftests.py without a kernel tree (CI has none): it finds every
``tcp_congestion_ops`` of a progs directory, notes which ask for ECN, and writes the
scenario specs a flow of the program runs in; run here on tests/bpf_programs/, programs
of our own written as the selftests are."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import bpf_selftests  # noqa: E402
from tcplab.specs.load import tomllib  # noqa: E402  (tomli before Python 3.11)

PROGS = REPO / "tests" / "bpf_programs"


def test_every_struct_ops_of_a_directory_is_found():
    found = {(o.file, o.var, o.ecn) for o in bpf_selftests.discover(PROGS)}
    # two_renos.bpf.c has a plain and a .struct_ops.link one; none asks for ECN.
    assert ("two_renos.bpf.c", "two_renos", False) in found
    assert ("two_renos.bpf.c", "two_renos_slow", False) in found
    assert ("chatty_reno.bpf.c", "chatty_reno", False) in found
    assert ("counting_reno.bpf.c", "counting_reno", False) in found


def test_a_scenario_spec_names_the_file_the_directory_and_the_struct_ops():
    ops = bpf_selftests.Ops("two_renos.bpf.c", "two_renos_slow", False)
    spec = tomllib.loads(bpf_selftests.spec_text(ops, PROGS, "vs-cubic", 250, "5s"))
    assert spec["tcp"]["hz"] == 250
    first, second = spec["flows"]
    assert first["cc"] == f"bpf:{PROGS / 'two_renos.bpf.c'}"
    assert first["bpf"] == {"include": [str(PROGS)], "ops": "two_renos_slow"}
    assert second["cc"] == "cubic"
    step = tomllib.loads(bpf_selftests.spec_text(ops, PROGS, "step-ecn", 250, "5s"))
    assert step["bottleneck"]["aqm"] == {"kind": "step", "k": 20, "ecn": True}


def test_a_refusal_fits_a_table_cell():
    log = (
        "/tmp/tcplab-bpf-1-x/tl1a.bpf.o: the kernel refused to load it: Invalid argument\n"
        "libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n"
        "0: R1=ctx() R10=fp0\n"
        "; bpf_setsockopt(sk, ...) @ x.c:14\n"
        "6: (85) call bpf_setsockopt#49\n"
        "program of this type cannot use helper bpf_setsockopt#49\n"
        "processed 6 insns (limit 1000000)\n"
    )
    assert bpf_selftests.first_lines(log) == (
        "the object: the kernel refused to load it: Invalid argument / "
        "program of this type cannot use helper bpf_setsockopt#49"
    )
