"""A preset written in Python, run whole (issue 38): ``cc = "preset:FILE.py"`` in a spec,
run by ``tcplab run``, drives the flow between the engine's steps with the code the
environment trains with, into an ordinary run directory plus actions.csv; and bad preset
files, wrong places and bad actions are refused naming ``flows[i].cc``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("tcplab._engine", reason="needs the compiled engine")
pytest.importorskip("gymnasium", reason="needs gymnasium (tcplab[gym])")

import tcplab  # noqa: E402
from tcplab import preset_file  # noqa: E402
from tcplab.backends.kernel import requirements as kernel_requirements  # noqa: E402
from tcplab.errors import SpecError  # noqa: E402
from tcplab.gym import CongestionControlEnv  # noqa: E402
from tcplab.lowering import resolve  # noqa: E402
from tcplab.runs.digest import files_read  # noqa: E402
from tcplab.specs.load import as_spec  # noqa: E402

ORCA_DO_NOTHING = """
from tcplab.gym.presets import Orca

PRESET = Orca
INTERVAL = "20ms"


def policy(observation):
    return 0.0
"""

# Aurora, speeding up while the newest interval's latency ratio (feature 2 of the last
# 3) is under 1.1 and slowing down above it: a policy whose writes depend on what it sees.
AURORA_RATIO = """
from tcplab.gym.presets import Aurora

PRESET = Aurora


def policy(observation):
    return 2.0 if observation[-2] < 1.1 else -3.0
"""


def write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def spec(cc: str, *, flows: list | None = None, duration: str = "4s") -> dict:
    return {
        "experiment": {"duration": duration, "seed": 5},
        "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"},
        "flows": flows or [{"cc": cc, "rtt": "40ms"}],
    }


def test_a_do_nothing_orca_preset_file_is_cubics_run(tmp_path):
    """Action 0 writes int(int(100 x 4^0) x cwnd / 100) = cwnd, the window CUBIC has: the
    run is plain CUBIC's to the last metric, the flow named by its preset, and
    actions.csv holds one write each 20 ms after CUBIC's first exit from slow start."""
    f = write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    plain = tcplab.run(spec("cubic"), report=False)
    out = tmp_path / "run"
    driven = tcplab.run(spec(f"preset:{f}"), out, report=False)
    assert driven.summary["cc"].tolist() == ["preset:orca"]
    a, b = plain.summary.drop(columns=["cc"]), driven.summary.drop(columns=["cc"])
    assert a.equals(b), (a.T, b.T)
    rows = (out / "actions.csv").read_text().splitlines()
    assert rows[0] == "time_s,flow,field,value"
    times = [float(r.split(",")[0]) for r in rows[1:]]
    assert {r.split(",")[2] for r in rows[1:]} == {"cwnd_pkts"}
    assert np.allclose(np.diff(times), 0.020, atol=1e-9)
    assert "actions.csv" in json.loads((out / "manifest.json").read_text())["sha256"]


def test_a_preset_run_is_the_environments_episode_write_for_write(tmp_path):
    """The environment driven by the file's policy and a `tcplab run` of its episode's
    spec with the file: the same writes at the same times, the same metrics."""
    f = write(tmp_path, "ratio.py", AURORA_RATIO)
    env = CongestionControlEnv(spec=spec("external"), preset="aurora", interval="10ms")
    obs, _ = env.reset(seed=11)
    truncated = False
    while not truncated:
        obs, _, _, truncated, _ = env.step(2.0 if obs[-2] < 1.1 else -3.0)
    sim = env.simulation
    want_actions = list(sim.actions)
    want = env.finish()
    episode = dict(env.episode_spec)
    episode["flows"] = [dict(episode["flows"][0], cc=f"preset:{f}")]
    got = tcplab.run(episode, tmp_path / "run", report=False)
    got_actions = (tmp_path / "run" / "actions.csv").read_text().splitlines()[1:]
    assert len(got_actions) == len(want_actions) > 300
    for row, (t_ns, flow, field, value) in zip(got_actions, want_actions):
        assert row == f"{t_ns / 1e9:.9f},{flow},{field},{value!r}"
    # both directions occur: the policy reacts to what it sees
    rates = [v for _, _, fld, v in want_actions if fld == "pacing_rate_bps"]
    assert any(b > a for a, b in zip(rates, rates[1:]))
    assert any(b < a for a, b in zip(rates, rates[1:]))
    a, b = want.summary.drop(columns=["cc"]), got.summary.drop(columns=["cc"])
    assert a.equals(b), (a.T, b.T)


def test_two_preset_flows_each_act_at_their_own_interval(tmp_path):
    """An Orca file at 20 ms and a copy at 50 ms (INTERVAL edited) beside each other: each
    flow's writes come exactly one interval apart."""
    f20 = write(tmp_path, "o20.py", ORCA_DO_NOTHING)
    f50 = write(tmp_path, "o50.py", ORCA_DO_NOTHING.replace('"20ms"', '"50ms"'))
    flows = [{"cc": f"preset:{f20}", "rtt": "40ms"}, {"cc": f"preset:{f50}", "rtt": "40ms"}]
    r = tcplab.run(spec("", flows=flows), tmp_path / "run", report=False)
    assert r.summary["cc"].tolist() == ["preset:orca", "preset:orca"]
    rows = [x.split(",") for x in (tmp_path / "run" / "actions.csv").read_text().splitlines()[1:]]
    for flow, step in ((0, 0.020), (1, 0.050)):
        t = [float(x[0]) for x in rows if x[1] == str(flow)]
        assert len(t) > 20
        assert np.allclose(np.diff(t), step, atol=1e-9), (flow, np.diff(t)[:5])


def test_the_digest_holds_the_file_s_bytes(tmp_path):
    f = write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    before = files_read(as_spec(spec(f"preset:{f}")))["flows[0].cc"]
    f.write_text(ORCA_DO_NOTHING + "\n# edited\n")
    after = files_read(as_spec(spec(f"preset:{f}")))["flows[0].cc"]
    assert before != after


BAD_FILES = [
    ("notes.txt", "PRESET = 1", "a Python module ending in .py"),
    ("boom.py", "x = 1\nraise RuntimeError('no network here')\n", "raised RuntimeError (line 2)"),
    ("nopolicy.py", "from tcplab.gym.presets import Orca\nPRESET = Orca\n", "it has no policy"),
    ("notpreset.py", "PRESET = 3\ndef policy(o):\n    return 0\n", "PRESET must be"),
]


@pytest.mark.parametrize(("name", "text", "says"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_preset_file_is_refused_naming_the_flow(tmp_path, name, text, says):
    f = write(tmp_path, name, text)
    with pytest.raises(SpecError) as e:
        as_spec(spec(f"preset:{f}"))
    where, msg = e.value.problems[0]
    assert where == "flows[0].cc" and says in msg, e.value.problems


def test_a_missing_preset_file_and_params_are_refused(tmp_path):
    with pytest.raises(SpecError, match=r"flows\[0\]\.cc.*no such preset file"):
        as_spec(spec(f"preset:{tmp_path / 'gone.py'}"))
    f = write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    s = spec(f"preset:{f}")
    s["flows"][0]["params"] = {"beta": 0.7}
    with pytest.raises(SpecError, match=r"flows\[0\]\.params\.beta.*takes no params"):
        as_spec(s)


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ("return [0.0, 1.0]", "action: shape (2,)"),
        ("return float('nan')", "action: must be finite"),
        ("raise KeyError('w1')", "raised KeyError at "),
    ],
)
def test_a_bad_action_stops_the_run_naming_the_flow_and_writes_nothing(tmp_path, policy, says):
    f = write(tmp_path, "bad.py", ORCA_DO_NOTHING.replace("return 0.0", policy))
    out = tmp_path / "run"
    with pytest.raises(SpecError) as e:
        tcplab.run(spec(f"preset:{f}"), out, report=False)
    where, msg = e.value.problems[0]
    assert where == "flows[0].cc" and says in msg, e.value.problems
    assert not out.exists()


def test_an_interval_under_the_engines_floor_is_refused(tmp_path):
    f = write(tmp_path, "fast.py", ORCA_DO_NOTHING.replace('"20ms"', '"100us"'))
    with pytest.raises(SpecError, match=r"flows\[0\]\.cc.*INTERVAL must be 'rtt' or a duration"):
        tcplab.run(spec(f"preset:{f}"), report=False)


def test_the_kernel_backend_and_sweeps_refuse_a_preset_flow(tmp_path):
    from tcplab.backends.kernel.support import unsupported

    f = write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    problems = dict(unsupported(as_spec(spec(f"preset:{f}"))))
    assert "deploy a trained one" in problems["flows[0].cc"]
    swept = {**spec(f"preset:{f}"), "sweep": {"bottleneck.buffer": ["1bdp", "2bdp"]}}
    with pytest.raises(SpecError, match=r"flows\[0\]\.cc.*sweeps and the catalogue"):
        tcplab.sweep(swept, tmp_path / "sweep")
    assert not (tmp_path / "sweep" / "runs").exists()
    assert preset_file.refuse(as_spec(spec("cubic")), "x") == []


def test_the_cli_runs_a_relative_preset_file_and_exits_2_on_a_bad_one(tmp_path):
    """The path is taken against the spec file's directory; a bad file exits 2 naming
    the field and leaves no output directory."""
    write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    toml = '[experiment]\nduration = "2s"\n[bottleneck]\nrate = "20Mbps"\n'
    toml += '[[flows]]\ncc = "preset:zero.py"\nrtt = "40ms"\n'
    (tmp_path / "s.toml").write_text(toml)
    cmd = [sys.executable, "-m", "tcplab", "run", "s.toml", "-q", "--no-report", "-o"]
    ok = subprocess.run([*cmd, "out"], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "out" / "actions.csv").is_file()
    (tmp_path / "zero.py").write_text("PRESET = None\n")
    bad = subprocess.run([*cmd, "out2"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and "flows[0].cc" in bad.stderr, bad.stderr
    assert not (tmp_path / "out2").exists()


def test_the_pre_run_estimate_counts_a_presets_python_steps(tmp_path):
    """Resolving (where every estimate is made, before anything runs): 1000 flows at the
    1 ms floor for 10 s: 1000 x 10 s / 1 ms = 10,000,000 steps, over
    the 6,000,000 limit; an INTERVAL longer than the run is refused as never acting."""
    fast = write(tmp_path, "fast.py", ORCA_DO_NOTHING.replace('"20ms"', '"1ms"'))
    s = spec("", flows=[{"cc": f"preset:{fast}", "rtt": "40ms", "count": 1000}], duration="10s")
    with pytest.raises(SpecError, match=r"about 10,000,000 times.*limit is 6,000,000"):
        resolve(as_spec(s))
    slow = write(tmp_path, "slow.py", ORCA_DO_NOTHING.replace('"20ms"', '"5s"'))
    with pytest.raises(SpecError, match=r"flows\[0\]\.cc.*INTERVAL '5s' is longer than the run"):
        resolve(as_spec(spec(f"preset:{slow}", duration="4s")))


def test_the_shipped_preset_example_runs_from_its_copy_and_keeps_the_queue_short(tmp_path):
    """`tcplab examples gym` copies preset.toml and preset_orca.py; the spec runs as
    copied (its preset path relative to it). The rule (shrink CUBIC's window by 4^-0.1
    while srtt > 1.25 x min RTT) keeps CUBIC's goodput within 5 % and cuts its mean RTT by
    at least a fifth (measured: 66 against 101 ms)."""
    from tcplab.cli.app import main

    assert main(["examples", "gym", "-o", str(tmp_path)]) == 0
    spec_path = tmp_path / "gym" / "preset.toml"
    ruled = tcplab.run(spec_path, report=False).summary.iloc[0]
    cubic = tcplab.run(spec_path, overrides={"flows[0].cc": "cubic"}, report=False).summary.iloc[0]
    assert ruled["cc"] == "preset:orca"
    assert ruled["goodput_bps"] >= 0.95 * cubic["goodput_bps"]
    assert ruled["mean_rtt_ms"] <= 0.8 * cubic["mean_rtt_ms"], (
        ruled["mean_rtt_ms"],
        cubic["mean_rtt_ms"],
    )


_KERNEL_MISSING = "; ".join(r.detail for r in kernel_requirements.missing())


@pytest.mark.skipif(bool(_KERNEL_MISSING), reason=f"kernel backend unavailable: {_KERNEL_MISSING}")
def test_the_kernel_backends_check_names_only_the_preset_refusal(tmp_path):
    """Not also "not offered by this kernel" for the preset's name: one problem, the one
    that says where a preset runs."""
    from tcplab.backends import backend_of

    f = write(tmp_path, "zero.py", ORCA_DO_NOTHING)
    s = as_spec({**spec(f"preset:{f}"), "experiment": {"backend": "kernel", "duration": "4s"}})
    with pytest.raises(SpecError) as e:
        backend_of(s).check(s)
    assert [w for w, _ in e.value.problems] == ["flows[0].cc"], e.value.problems
    assert "runs only in a simulated `tcplab run`" in e.value.problems[0][1]
