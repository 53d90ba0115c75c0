"""Compiling ``bpf:`` sources (tcplab.bpf.object_for): the cache is keyed on every file
clang read (its depfile), a cached object is used only if its bytes have the sha256 it is
named by, and clang's failures are said in words about the user's own files. Needs clang
and libbpf's headers; skips, saying why, without them."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from tcplab import bpf, bpf_build

pytestmark = pytest.mark.skipif(
    shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
    reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
)

SOURCE = """#include "tcplab_cc.h"
#include "local.h"

char _license[] SEC("license") = "GPL";
const volatile __u32 floor_pkts = FLOOR;

SEC("struct_ops")
__u32 BPF_PROG(t_ssthresh, struct sock *sk)
{
	__u32 half = tcp_sk(sk)->snd_cwnd >> 1;

	return half > floor_pkts ? half : floor_pkts;
}

SEC("struct_ops")
void BPF_PROG(t_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(t_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops t = {
	.ssthresh = (void *)t_ssthresh,
	.cong_avoid = (void *)t_cong_avoid,
	.undo_cwnd = (void *)t_undo_cwnd,
	.name = "t_floor",
};
"""


@pytest.fixture
def prog(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPLAB_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "local.h").write_text("#define FLOOR 2\n")
    (src / "t.bpf.c").write_text(SOURCE)
    return src / "t.bpf.c"


def _floor(obj: Path) -> int:
    """The default of the program's ``floor_pkts`` parameter, as the engine reads it."""
    (p,) = [p for p in bpf._program(str(obj)).params if p["name"] == "floor_pkts"]
    return int(p["default"])


def test_editing_an_included_header_recompiles(prog):
    first = bpf.object_for(prog)
    assert bpf.object_for(prog) == first  # unchanged: reused
    assert _floor(first) == 2
    (prog.parent / "local.h").write_text("#define FLOOR 5\n")
    second = bpf.object_for(prog)
    assert second != first and _floor(second) == 5


def test_a_header_edit_that_breaks_the_source_is_an_error_not_the_old_object(prog):
    bpf.object_for(prog)
    (prog.parent / "local.h").write_text("#define FLOOR (\n")
    with pytest.raises(bpf.BpfBuildError, match="does not compile"):
        bpf.object_for(prog)


def test_a_tampered_cached_object_is_not_used(prog):
    obj = bpf.object_for(prog)
    good = obj.read_bytes()
    obj.write_bytes(good[:-8] + b"tampered")  # same name, other bytes
    again = bpf.object_for(prog)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == again.stem
    assert again.read_bytes() == good  # recompiled, not the swapped file
    again.write_bytes(b"\x7fELF another program")
    with pytest.raises(bpf.BpfBuildError, match="no longer has the sha256"):
        bpf.kernel_object(str(again), {})


def test_a_swapped_object_for_a_given_o_is_replaced(tmp_path, prog):
    obj = bpf.object_for(prog)
    user_o = tmp_path / "mine.o"
    user_o.write_bytes(obj.read_bytes())
    obj.write_bytes(b"swapped")
    assert bpf.object_for(user_o) == obj and obj.read_bytes() == user_o.read_bytes()


def test_depfile_paths_follow_makes_escaping(tmp_path):
    text = "prog.o: /a/t.bpf.c /inc/tcplab_cc.h \\\n  my\\ dir/local.h \\\n  /usr/include/bpf/bpf_helpers.h\n"
    assert bpf.depfile_paths(text, tmp_path) == [
        Path("/a/t.bpf.c"),
        Path("/inc/tcplab_cc.h"),
        tmp_path / "my dir" / "local.h",
        Path("/usr/include/bpf/bpf_helpers.h"),
    ]


def test_clang_never_echoes_a_file_outside_the_programs_directory(tmp_path, prog):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:SECRETHASH:19000:0:99999:7:::\n")
    prog.write_text(f'#include "{secret}"\n' + SOURCE)
    with pytest.raises(bpf.BpfBuildError) as err:
        bpf.object_for(prog)
    text = str(err.value)
    assert "SECRETHASH" not in text and "its text is not shown" in text
    assert f"{secret}:1:" in text  # where, so the user can look


@pytest.mark.parametrize("where", ["sibling", "absolute"])
def test_clang_never_echoes_a_header_found_through_an_include_directory_outside(
    tmp_path, prog, where
):
    # Before: every bpf.include directory counted as the user's own, so
    # bpf.include = ["../outside"] or ["/etc"] with `#include "passwd"` showed the
    # file's text line by line in clang's diagnostics. Own is now the program's directory.
    outside = tmp_path / "outside" if where == "sibling" else tmp_path / "abs" / "etc"
    outside.mkdir(parents=True)
    (outside / "passwd").write_text("root:SECRETHASH:19000:0:99999:7:::\n")
    prog.write_text('#include "passwd"\n' + SOURCE)
    include = str(outside if where == "absolute" else prog.parent / ".." / "outside")
    with pytest.raises(bpf.BpfBuildError) as err:
        bpf.object_for(prog, bpf.Build(include=(include,)))
    text = str(err.value)
    assert "SECRETHASH" not in text and "its text is not shown" in text, text
    assert "passwd:1:" in text  # where, so the user can look


def test_a_header_under_the_programs_directory_is_shown_through_an_include(prog):
    # An include directory inside the program's directory is the program's own.
    inc = prog.parent / "inc"
    inc.mkdir()
    (inc / "mine.h").write_text("int broken_decl = undeclared_in_my_header;\n")
    prog.write_text('#include "mine.h"\n' + SOURCE)
    with pytest.raises(bpf.BpfBuildError) as err:
        bpf.object_for(prog, bpf.Build(include=(str(inc),)))
    text = str(err.value)
    assert "undeclared_in_my_header" in text and "int broken_decl" in text, text


def test_the_users_own_errors_are_shown_in_full(prog):
    prog.write_text(SOURCE.replace("return tcp_sk(sk)->snd_cwnd;", "return snd_cwnd_typo;"))
    with pytest.raises(bpf.BpfBuildError) as err:
        bpf.object_for(prog)
    text = str(err.value)
    assert "use of undeclared identifier 'snd_cwnd_typo'" in text
    assert "return snd_cwnd_typo;" in text  # clang's excerpt of the user's line


def test_a_clang_that_hangs_is_said_in_words(prog, monkeypatch):
    real = subprocess.run

    def slow(cmd, *a, **kw):
        if "-MD" in cmd:
            raise subprocess.TimeoutExpired(cmd, kw.get("timeout"))
        return real(cmd, *a, **kw)

    monkeypatch.setattr(subprocess, "run", slow)
    with pytest.raises(bpf.BpfBuildError, match=r"did not finish compiling it within 120 s"):
        bpf.object_for(prog)


VMLINUX_SOURCE = """#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";
extern unsigned long CONFIG_HZ __kconfig;

SEC("struct_ops")
__u32 BPF_PROG(v_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd > CONFIG_HZ ? tp->snd_cwnd >> 1 : 2;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops v = {
	.ssthresh = (void *)v_ssthresh,
	.name = "v_kconfig",
};
"""


def test_a_source_written_against_vmlinux_h_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPLAB_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "v.bpf.c"
    src.write_text(VMLINUX_SOURCE)
    obj = bpf.object_for(src)
    assert obj.read_bytes()[:4] == b"\x7fELF"
    header = bpf.vmlinux_dir() / "vmlinux.h"
    assert b"struct tcp_congestion_ops {" in header.read_bytes()


def test_the_shipped_vmlinux_h_is_used_without_kernel_btf(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(bpf_build, "KERNEL_BTF", tmp_path / "no-btf")
    where = bpf.vmlinux_dir()
    assert where.name.startswith("shipped-")
    assert b"struct tcp_sock {" in (where / "vmlinux.h").read_bytes()


def test_defines_and_include_directories_are_part_of_the_key(prog):
    inc = prog.parent.parent / "inc"
    inc.mkdir()
    (inc / "local.h").write_text("#define FLOOR 7\n")  # found before the source's own
    moved = prog.parent / "elsewhere"
    moved.mkdir()
    (prog.parent / "local.h").rename(moved / "local.h")
    a = bpf.object_for(prog, bpf.Build(include=(str(inc),)))
    assert _floor(a) == 7
    prog.write_text(
        SOURCE.replace('#include "local.h"\n', "#ifndef FLOOR\n#define FLOOR 2\n#endif\n")
    )
    b = bpf.object_for(prog, bpf.Build(define=(("FLOOR", "9"),)))
    assert _floor(b) == 9 and _floor(bpf.object_for(prog)) == 2


def _run_spec(tmp_path, flow_extra: str) -> tuple[int, str]:
    from tcplab.cli.app import main

    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"""
[experiment]
duration = "1s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
[[flows]]
cc = "bpf:src/t.bpf.c"
rtt = "20ms"
{flow_extra}
"""
    )
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"])
    return code, err.getvalue()


def test_a_spec_passes_include_directories_and_defines(tmp_path, prog):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "local.h").write_text("#define FLOOR 3\n")
    code, err = _run_spec(tmp_path, 'bpf = { include = ["inc"], define = { EXTRA = 1 } }')
    assert code == 0, err


@pytest.mark.parametrize(
    "extra, says",
    [
        ('bpf = { include = ["missing"] }', "flows[0].bpf.include[0]"),
        ('bpf = { define = { "1X" = 2 } }', "flows[0].bpf.define.1X"),
        ('bpf = { define = { X = "a;b" } }', "flows[0].bpf.define.X"),
        ('bpf = { includes = ["inc"] }', "flows[0].bpf.includes"),
    ],
)
def test_bad_compile_options_are_named(tmp_path, prog, extra, says):
    code, err = _run_spec(tmp_path, extra)
    assert code == 2 and says in err, err
