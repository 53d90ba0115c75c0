"""Run digests (tcplab.runs.digest, scheme 2): a versioned sha256 of the resolved spec,
the files the run reads, the backend and the version, never of the engine config. A
cache must never serve a run computed under other settings, and the same run must find
its cache whether a default is written out or left out."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest
from tcplab.lowering import world_config
from tcplab.runs.digest import DIGEST_SCHEME, digest_document, run_digest
from tcplab.specs.load import load_spec, parse_spec
from tcplab.version import __version__

ROOT = Path(__file__).resolve().parents[2]
BASE = {
    "experiment": {"duration": "2s", "seed": 3},
    "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"},
    "flows": [{"cc": "bbr", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
}


def _with(**sections) -> dict:
    raw = copy.deepcopy(BASE)
    for name, table in sections.items():
        if isinstance(table, dict):
            raw.setdefault(name, {}).update(table)
        else:
            raw[name] = table
    return raw


def _digest(raw: dict) -> str:
    return run_digest(parse_spec(raw))


# Each value is the default the spec model documents (specs/model.py; the engine's own
# where the model reads it from the engine's schema: TcpConfig's mss_bytes 1448,
# header_bytes 52, hz 1000, kernel 618 = "6.18", start_jitter_ns 600000).
DEFAULTS_WRITTEN_OUT = _with(
    experiment={"sample_interval": "100ms", "backend": "sim"},
    tcp={
        "mss": 1448,
        "header": 52,
        "hz": 1000,
        "kernel": "6.18",
        "ecn": False,
        "receive_buffer": "linux",
        "start_jitter": "600us",
        "initial_cwnd": 10,
    },
    bottleneck={"loss": 0.0},
    flows=[
        {"cc": "bbr", "rtt": "40ms", "count": 1, "start": "0s", "params": {}},
        {"cc": "cubic", "rtt": "40ms"},
    ],
)


def test_defaults_written_out_or_left_out_are_the_same_run():
    assert _digest(DEFAULTS_WRITTEN_OUT) == _digest(BASE)
    # ... and the same engine config, now that it writes every key whole.
    assert world_config(parse_spec(DEFAULTS_WRITTEN_OUT)) == world_config(parse_spec(BASE))


@pytest.mark.parametrize(
    "change",
    [
        {"tcp": {"hz": 250}},
        {"tcp": {"kernel": "4.9"}},
        {"tcp": {"start_jitter": "0s"}},
        {"experiment": {"seed": 4}},
        {"experiment": {"backend": "kernel"}},
        {"bottleneck": {"buffer": "2bdp"}},
        {
            "flows": [
                {"cc": "bbr", "rtt": "40ms", "params": {"kernel": "4.9"}},
                {"cc": "cubic", "rtt": "40ms"},
            ]
        },
    ],
    ids=lambda c: json.dumps(c),
)
def test_a_setting_that_changes_the_run_changes_the_digest(change):
    assert _digest(_with(**change)) != _digest(BASE)


def test_the_document_is_versioned_and_names_the_backend():
    doc = digest_document(parse_spec(BASE))
    assert doc["scheme"] == DIGEST_SCHEME == 2
    assert doc["tcplab"] == __version__
    assert doc["backend"] == "sim" and doc["spec"]["experiment"]["backend"] == "sim"
    assert doc["files"] == {}  # a run of native algorithms reads no file
    # The engine config is not part of it.
    assert "duration_ns" not in json.dumps(doc)


def _trace_spec(tmp_path: Path, trace: Path) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[experiment]\nduration = "1s"\n'
        f'[bottleneck]\nrate = {{ trace = "{trace.name}" }}\ndelay = "10ms"\nbuffer = "1bdp"\n'
        '[[flows]]\ncc = "cubic"\nrtt = "40ms"\n'
    )
    return spec


def _write(path: Path, text: str, mtime_ns: int) -> None:
    # A fresh mtime: traces are cached by (path, mtime), as a rewrite normally gets one.
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_changed_trace_file_changes_the_digest(tmp_path):
    trace = tmp_path / "link.trace"
    # Three opportunities over 3 ms either way: the same mean rate (12 Mbit/s), so the
    # resolved spec is the same and only the file's content differs.
    _write(trace, "1\n2\n3\n", 1_000_000_000)
    spec = _trace_spec(tmp_path, trace)
    before = run_digest(load_spec(spec))
    assert run_digest(load_spec(spec)) == before
    _write(trace, "2\n2\n3\n", 2_000_000_000)
    after = load_spec(spec)
    assert after.bottleneck.rate == 12_000_000
    assert run_digest(after) != before
    _write(trace, "1\n2\n3\n", 3_000_000_000)  # the first content again: the first run
    assert run_digest(load_spec(spec)) == before


def test_a_changed_policy_file_changes_the_digest(tmp_path):
    policy = tmp_path / "policy.json"
    shutil.copy(ROOT / "experiments" / "gym" / "cem-linear.json", policy)
    raw = _with(flows=[{"cc": f"policy:{policy}", "rtt": "40ms"}])
    before = _digest(raw)
    assert _digest(raw) == before
    doc = json.loads(policy.read_text())
    doc["layers"][0]["bias"][0] += 0.5
    policy.write_text(json.dumps(doc))
    assert _digest(raw) != before


@pytest.mark.skipif(
    shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
    reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
)
def test_a_changed_bpf_program_changes_the_digest(tmp_path):
    prog = tmp_path / "algo.bpf.c"
    shutil.copy(ROOT / "bpf" / "examples" / "reno.bpf.c", prog)
    raw = _with(flows=[{"cc": f"bpf:{prog}", "rtt": "40ms"}])
    before = _digest(raw)
    assert _digest(raw) == before
    shutil.copy(ROOT / "bpf" / "examples" / "cubic.bpf.c", prog)  # same path, other code
    assert _digest(raw) != before
