"""Every writer, against directories drawn at random: user files whose names are the
writer's own outputs (spec.toml, summary.json, compare.csv, report.html, .lock,
sweep.json ...), a manifest.json or outputs.json listing them with made-up digests, into
an empty directory, a finished run of ours, or a sweep of ours. Whatever the writer does,
nothing of the user's is lost: every user file is byte for byte as it was; and a refusal
(exit 2) leaves the directory as it found it. The per-writer cases that lost files before are in
test_ownership.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcplab.cli.app import main

pytestmark = pytest.mark.engine

SPEC = """
[experiment]
duration = "1s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
cc = "cubic"
rtt = "20ms"
"""
SWEEP = SPEC + '[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp"]\n'

# The writers' own file names, and one no writer uses.
NAMES = [
    "spec.toml",
    "world.json",
    "summary.json",
    "series.csv",
    "series.parquet",
    "report.html",
    "report.png",
    "compare.csv",
    "compare.md",
    "compare.png",
    ".lock",
    "sweep.json",
    "table.csv",
    "notes.txt",
]
CONTENT = st.binary(min_size=0, max_size=24)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A spec, a sweep spec, two runs and a sweep of ours to start directories from."""
    d = tmp_path_factory.mktemp("made")
    (d / "s.toml").write_text(SPEC)
    (d / "sw.toml").write_text(SWEEP)
    assert main(["run", str(d / "s.toml"), "-o", str(d / "a"), "-q", "--no-report"]) == 0
    assert (
        main(["run", str(d / "s.toml"), "-o", str(d / "b"), "-q", "--no-report", "--seed", "2"])
        == 0
    )
    assert main(["sweep", str(d / "sw.toml"), "-o", str(d / "sweep"), "-q", "--workers", "1"]) == 0
    return d


def _snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@st.composite
def directories(draw):
    """(start, user files, listing file or None): the directory before the writer runs."""
    start = draw(st.sampled_from(["none", "empty", "run", "sweep"]))
    files = draw(st.dictionaries(st.sampled_from(NAMES), CONTENT, max_size=3))
    listing = draw(st.sampled_from([None, "manifest.json", "outputs.json"]))
    return start, files, listing


def _prepare(made: Path, target: Path, start: str, files: dict, listing: str | None) -> None:
    if start == "run":
        shutil.copytree(made / "a", target)
    elif start == "sweep":
        shutil.copytree(made / "sweep", target)
    elif start == "empty" or files or listing:
        target.mkdir()
    for name, data in files.items():
        (target / name).write_bytes(data)
    if listing and target.is_dir():
        # The user's files listed with made-up digests (any string): they stay the user's.
        doc = {"sha256": {name: "0" * 64 for name in files}}
        (target / listing).write_text(json.dumps(doc))


def _writers(made: Path, target: Path) -> dict[str, list[str]]:
    return {
        "run": ["run", str(made / "s.toml"), "-o", str(target), "-q", "--no-report"],
        "sweep": ["sweep", str(made / "sw.toml"), "-o", str(target), "-q", "--workers", "1"],
        "compare": ["compare", str(made / "a"), str(made / "b"), "-o", str(target)],
        "report": ["report", str(target)],
    }


@settings(
    max_examples=int(os.environ.get("TCPLAB_FUZZ_WRITERS", "40")),
    derandomize=os.environ.get("TCPLAB_FUZZ") != "long",
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    writer=st.sampled_from(["run", "sweep", "compare", "report"]),
    state=directories(),
)
def test_no_writer_loses_a_users_file(made, tmp_path_factory, capsys, writer, state):
    start, files, listing = state
    target = tmp_path_factory.mktemp("w") / "dir"
    _prepare(made, target, start, files, listing)
    before = _snapshot(target) if target.exists() else {}
    users = {name: data for name, data in before.items() if name in files or name == listing}
    rc = main(_writers(made, target)[writer])
    err = capsys.readouterr().err
    assert rc in (0, 1, 2), (rc, err)
    after = _snapshot(target) if target.exists() else {}
    for name, data in users.items():
        assert after.get(name) == data, f"{writer} changed the user's {name}: {err}"
    if rc == 2:
        assert after == before, f"{writer} refused but changed the directory: {err}"
        assert err.strip(), "a refusal says why"
    leftovers = [p.name for p in target.parent.iterdir() if p.name.startswith(".tmp")]
    assert not leftovers, leftovers
