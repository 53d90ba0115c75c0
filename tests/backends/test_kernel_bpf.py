"""BPF programs on the kernel backend (backends/kernel/bpf_ops.py, crates/bpfload): the object the
simulator runs is registered into the running kernel under a run-unique name for the
run, selected by the agents, reported by its program's name, and unregistered after it,
or after a SIGKILL by the next run or doctor. Needs root, the kernel backend, the loader,
BTF and clang; skipped elsewhere with the reason."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_skips import NEEDS_BPF_ON_KERNEL
from tcplab.backends.kernel import bpf_ops
from tcplab.cli.app import main

REPO = Path(__file__).resolve().parents[2]
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
pytestmark = NEEDS_BPF_ON_KERNEL

SPEC = f"""
[experiment]
duration = "4s"
sample_interval = "100ms"
backend = "kernel"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "bpf:{REPO / "bpf" / "examples" / "reno.bpf.c"}"
rtt = "40ms"

[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def _ours_loaded() -> list[str]:
    """This process's registered programs (bpf_ops.unique_name: tl<pid><letter>...); a
    kernel run of another process (the wheel test's, say) has its own."""
    mine = re.compile(rf"^tl{os.getpid()}[a-z]")
    return [n for n in AVAILABLE.read_text().split() if mine.match(n)]


def test_a_bpf_program_runs_on_the_kernel_and_is_removed_after(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [f["cc"] for f in summary["flows"]] == ["bpf_reno", "cubic"]
    reno = summary["flows"][0]
    assert reno["goodput_bps"] > 1e6  # it carried traffic: the kernel ran the program
    assert _ours_loaded() == [] and not (bpf_ops.STATE_DIR / f"bpf-{os.getpid()}.json").exists()


def test_programs_of_a_killed_run_are_unregistered_by_doctor(capsys):
    from tcplab import bpf

    prog = bpf.program(f"bpf:{REPO / 'bpf' / 'examples' / 'reno.bpf.c'}")
    reg = bpf_ops.register([(prog.object_path.read_bytes(), prog.name)])
    names, ids = reg.names, reg.ids
    # As if this process had died with SIGKILL: its record names a pid that is gone (and
    # its loader, SIGKILLed too, left the plain struct_ops registered).
    reg.process.kill()
    reg.process.wait()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    record = bpf_ops.STATE_DIR / f"bpf-{dead}.json"
    record.write_text(json.dumps({"pid": int(dead), "ids": ids}))
    (bpf_ops.STATE_DIR / f"bpf-{os.getpid()}.json").unlink(missing_ok=True)
    assert names[0] in AVAILABLE.read_text().split()
    assert main(["doctor"]) == 0
    assert (
        f"unregistered BPF programs of dead runs: struct_ops ids {ids}" in capsys.readouterr().out
    )
    assert _ours_loaded() == [] and not record.exists()


def test_an_object_libbpf_cannot_read_is_refused_in_words():
    with pytest.raises(bpf_ops.BpfLoadError, match="libbpf could not open it"):
        bpf_ops.register([(bytes(64) + b"bpf_reno\0", "bpf_reno")])  # not an ELF object
    assert not (bpf_ops.STATE_DIR / f"bpf-{os.getpid()}.json").exists()


def test_params_reach_the_program_in_the_kernel(tmp_path):
    """A flow's params are written into the registered copy's .rodata: the kernel's own
    view of the program's read-only map (bpftool's BTF-formatted dump) shows CUBIC's
    ``beta = 512`` and ``hystart = false`` where the object says 717 and true; and a run
    with params is accepted and runs them."""
    from tcplab import bpf

    prog = bpf.program(f"bpf:{REPO / 'bpf' / 'examples' / 'cubic.bpf.c'}")
    data, name = bpf.kernel_object(str(prog.object_path), {"beta": 512, "hystart": False})
    reg = bpf_ops.register([(data, name)])
    names = reg.names
    try:
        maps = json.loads(
            subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True).stdout
        )
        # libbpf names the map after the object, cut to fit 15 characters.
        (rodata,) = [m for m in maps if m.get("name") == f"{names[0][:8]}.rodata"]
        dump = json.loads(
            subprocess.run(
                ["bpftool", "-j", "map", "dump", "id", str(rodata["id"])],
                capture_output=True,
                text=True,
            ).stdout
        )
    finally:
        bpf_ops.unregister(reg)
    values = {k: v for item in dump[0]["formatted"]["value"][".rodata"] for k, v in item.items()}
    assert (values["beta"], values["hystart"], values["bic_scale"]) == (512, False, 41)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        SPEC.replace("reno.bpf.c", "cubic.bpf.c").replace(
            'rtt = "40ms"\n', 'rtt = "40ms"\nparams = { beta = 512 }\n', 1
        )
    )
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [f["cc"] for f in summary["flows"]] == ["bpf_cubic", "cubic"]
    assert summary["flows"][0]["goodput_bps"] > 1e6
    assert _ours_loaded() == []


BAD_INDEX = """#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";
__u32 table[4];

SEC("struct_ops")
__u32 BPF_PROG(bad_ssthresh, struct sock *sk)
{
	return table[tcp_sk(sk)->snd_cwnd]; /* no bound: the verifier cannot prove it */
}

SEC("struct_ops")
void BPF_PROG(bad_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(bad_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops bad = {
	.ssthresh = (void *)bad_ssthresh,
	.cong_avoid = (void *)bad_cong_avoid,
	.undo_cwnd = (void *)bad_undo_cwnd,
	.name = "bad_index",
};
"""


def test_the_kernels_verifier_log_reaches_the_user(tmp_path, capsys):
    """Validating a spec (here for the simulator) on a machine with the kernel's verifier
    at hand loads the program into it without registering it: an array index the verifier
    cannot bound (which the simulator only checks when it runs) is refused with the
    verifier's log, naming the program and the source line."""
    (tmp_path / "bad.bpf.c").write_text(BAD_INDEX)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        SPEC.replace('backend = "kernel"\n', "").replace(
            str(REPO / "bpf" / "examples" / "reno.bpf.c"), "bad.bpf.c"
        )
    )
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "flows[0].cc" in err and "the kernel's verifier refuses bad_index" in err
    assert "prog 'bad_ssthresh'" in err and "table[tcp_sk(sk)->snd_cwnd]" in err
    assert _ours_loaded() == []


def test_a_selftest_style_object_with_two_struct_ops_registers_the_chosen_one():
    """tests/bpf_programs/two_renos.bpf.c (vmlinux.h, CONFIG_HZ, kfuncs, a shared global,
    a plain and a .struct_ops.link struct_ops) loads through tcplab-bpfload and, as the
    kernel's selftests attach only the struct_ops they test, registers the one asked for
    by name under a run-unique name (the .struct_ops.link one: no plain map id to
    remove; the plain one: its id recorded); nothing of ours is left after."""
    from tcplab import bpf

    obj = bpf.object_for(REPO / "tests" / "bpf_programs" / "two_renos.bpf.c")
    for asked, plain_ids in (("two_renos_slow", 0), ("two_renos", 1)):
        reg = bpf_ops.register([(obj.read_bytes(), asked)])
        try:
            loaded = AVAILABLE.read_text().split()
            assert len(reg.all_names) == 1 and reg.all_names[0] in loaded
            assert reg.names == reg.all_names
            assert len(reg.ids) == plain_ids  # only a plain one outlives a killed loader
        finally:
            bpf_ops.unregister(reg)
        assert _ours_loaded() == []
