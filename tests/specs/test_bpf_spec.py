"""``cc = "bpf:..."`` in a spec (tcplab.bpf): a BPF struct_ops program compiled by clang,
cached by its bytes, run by the engine's tcplab_bpf, its parameters checked by name.
Needs clang and libbpf's headers (scripts/test.sh installs them as root); skips, saying
why, without them."""

from __future__ import annotations

import json
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
EXAMPLES = Path(__file__).resolve().parents[2] / "bpf" / "examples"
QUICKSTART = Path(__file__).resolve().parents[2] / "experiments" / "quickstart.toml"


def _spec(cc: str, loss: float = 0.0, params: dict | None = None) -> dict:
    flow = {"cc": cc, "rtt": "40ms", "count": 2, "stagger": "1s"}
    if params:
        flow["params"] = params
    return {
        "experiment": {"duration": "8s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp", "loss": loss},
        "flows": [flow, {"cc": "cubic", "rtt": "40ms"}],
    }


NAMES = {"bpf_reno": "reno", "bpf_cubic": "cubic", "bpf_bbr": "bbr", "bpf_da_bbr": "da-bbr"}


def _numbers(summary: dict) -> dict:
    """summary.json without the algorithms' names and their info columns."""
    text = json.dumps({k: summary[k] for k in ("flows", "aggregate")}, sort_keys=True)
    for bpf_name, native in NAMES.items():
        text = text.replace(f'"{bpf_name}"', f'"{native}"')
    return json.loads(text)


@pytest.mark.parametrize("loss", [0.0, 0.01])
@pytest.mark.parametrize("name", ["reno", "cubic"])
def test_a_bpf_program_gives_the_native_algorithms_summary(name, loss):
    native = tcplab.run(_spec(name, loss), seed=3)
    prog = tcplab.run(_spec(f"bpf:{EXAMPLES / f'{name}.bpf.c'}", loss), seed=3)
    assert _numbers(prog.summary_json) == _numbers(native.summary_json)
    assert list(prog.summary_json["by_cc"]) == [f"bpf_{name}", "cubic"]


def test_paths_are_relative_to_the_spec_and_parameters_are_globals(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    shutil.copy(EXAMPLES / "cubic.bpf.c", tmp_path / "mine.bpf.c")
    text = QUICKSTART.read_text()
    spec.write_text(
        text.replace('cc = "cubic"', 'cc = "bpf:mine.bpf.c"\nparams = { beta = 800 }', 1)
    )
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    world = json.loads((tmp_path / "out" / "world.json").read_text())
    bpf_flows = [f for f in world["flows"] if f["cc"] == "bpf"]
    assert bpf_flows and bpf_flows[0]["params"] == {"beta": 800}
    # The object is cached under the sha256 of its own bytes: the digest covers the code.
    import hashlib

    obj = Path(bpf_flows[0]["bpf_object"])
    assert obj.stem == hashlib.sha256(obj.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "params, says",
    [
        ({"bogus": 1}, "flows[1].params.bogus: 'bogus' is not a parameter of bpf_cubic"),
        (
            {"beta": 1.5},
            "flows[1].params.beta: parameter 'beta' of bpf_cubic: expected a whole number",
        ),
        (
            {"hystart": 3},
            "flows[1].params.hystart: parameter 'hystart' of bpf_cubic: expected true or false",
        ),
    ],
)
def test_bad_parameters_are_named(tmp_path, capsys, params, says):
    spec = tmp_path / "spec.toml"
    p = ", ".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
    spec.write_text(
        QUICKSTART.read_text().replace(
            'cc = "cubic"', f'cc = "bpf:{EXAMPLES / "cubic.bpf.c"}"\nparams = {{ {p} }}', 1
        )
    )
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q"]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_file_that_does_not_compile_shows_clangs_message(tmp_path, capsys):
    (tmp_path / "bad.bpf.c").write_text("int x = ;\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(QUICKSTART.read_text().replace('cc = "cubic"', 'cc = "bpf:bad.bpf.c"', 1))
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "flows[" in err and "does not compile (clang)" in err and "expected expression" in err
    assert not (tmp_path / "out").exists()


def test_an_object_without_struct_ops_is_refused(tmp_path, capsys):
    (tmp_path / "plain.o").write_bytes(b"\x7fELF not really")
    spec = tmp_path / "spec.toml"
    spec.write_text(QUICKSTART.read_text().replace('cc = "cubic"', 'cc = "bpf:plain.o"', 1))
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q"]) == 2
    assert "flows[" in capsys.readouterr().err


def test_algorithms_lists_a_programs_parameters(capsys):
    assert main(["algorithms", "--bpf", str(EXAMPLES / "dctcp.bpf.c"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "bpf_dctcp"
    assert {p["name"]: p["default"] for p in out["params"]}["shift_g"] == 4  # tcp_dctcp.c


def test_the_same_object_and_seed_give_identical_runs():
    spec = _spec(f"bpf:{EXAMPLES / 'bbr.bpf.c'}")
    a, b = tcplab.run(spec, seed=5), tcplab.run(spec, seed=5)
    assert a.summary_json == b.summary_json
    assert a.series.equals(b.series)


def test_the_worked_examples_commands(tmp_path, capsys):
    # docs/WRITING_ALGORITHMS.md, Path 1 (the kernel command runs in test_kernel_bpf.py).
    repo = EXAMPLES.parents[1]
    assert main(["algorithms", "--bpf", str(EXAMPLES / "cubic.bpf.c")]) == 0
    assert "bpf_cubic: BPF struct_ops program" in capsys.readouterr().out
    out = tmp_path / "bpf_cubic"
    spec = repo / "experiments" / "bpf_cubic.toml"
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 0
    shares = {f["cc"]: f["share"] for f in json.loads((out / "summary.json").read_text())["flows"]}
    assert set(shares) == {"bpf_cubic", "cubic"}


@pytest.mark.parametrize("file, native", [("bbr", "bbr"), ("da_bbr", "da-bbr")])
def test_bbr_and_a_research_variant_as_bpf_match_their_rust_ports(file, native):
    # DA-BBR as BPF (bbr.bpf.c with its one change) against our Rust port: the same run.
    spec = {
        "experiment": {"duration": "15s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "2ms", "buffer": "2bdp"},
        "flows": [{"cc": native, "rtt": "10ms"}, {"cc": native, "rtt": "50ms", "start": "1s"}],
    }
    ours = tcplab.run(spec, seed=2).summary_json
    spec["flows"] = [dict(f, cc=f"bpf:{EXAMPLES / f'{file}.bpf.c'}") for f in spec["flows"]]
    prog = tcplab.run(spec, seed=2).summary_json
    # Everything measured on the network is equal; BPF programs export no internals
    # (no get_info in struct_ops), so BBR's mode and estimate metrics exist only natively.
    flow_keys = ("share", "goodput_bps", "retransmitted_packets", "sent_packets", "mean_rtt_ms")
    for fa, fb in zip(ours["flows"], prog["flows"], strict=True):
        assert {k: fa[k] for k in flow_keys} == {k: fb[k] for k in flow_keys}
    agg_keys = ("utilization", "jain_index", "retransmitted_packets", "mean_backlog_pkts")
    assert {k: ours["aggregate"][k] for k in agg_keys} == {
        k: prog["aggregate"][k] for k in agg_keys
    }


def test_a_short_name_is_the_shipped_example_and_an_unknown_one_is_refused(tmp_path, capsys):
    # "bpf:cubic" is bpf/examples/cubic.bpf.c (it failed "not a file"): the same
    # run as the example named by its path, from a spec anywhere.
    short = tcplab.run(_spec("bpf:cubic"), seed=3)
    by_path = tcplab.run(_spec(f"bpf:{EXAMPLES / 'cubic.bpf.c'}"), seed=3)
    assert short.summary_json["flows"] == by_path.summary_json["flows"]
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[experiment]\nduration = "1s"\n[bottleneck]\nrate = "10Mbps"\ndelay = "5ms"\n'
        '[[flows]]\ncc = "bpf:cubbic"\nrtt = "20ms"\n'
    )
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert (
        "flows[0].cc" in err and "'cubbic'" in err and "bbr, bic, cdg, copa, cubic, da_bbr" in err
    ), err
    assert "bpf:./cubbic.bpf.c" in err
