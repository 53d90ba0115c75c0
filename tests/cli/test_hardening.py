"""Bad input answered as input problems (exit 2, the user's field named, no
traceback, nothing left behind), interrupted and concurrent runs, and summary.json's
schema for a run in which nothing is delivered."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tcplab.cli.app import main

pytestmark = pytest.mark.engine

SPEC = """
[experiment]
duration = "2s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"

[[flows]]
cc = "reno"
rtt = "20ms"
"""

# Long enough that a signal 3 s in lands inside the simulation on any machine (the engine
# runs 600 s of it in about 3 s now; 3000 s take about 15 s, and the signalled runs stop early).
LONG = SPEC.replace('duration = "2s"', 'duration = "3000s"').replace("10Mbps", "200Mbps")


def tcplab(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "tcplab", *map(str, args)], capture_output=True, text=True, **kw
    )


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".tmp-"))


@pytest.mark.parametrize(
    "content, says",
    [
        ("name = 'caf\u00e9'".encode("latin-1"), "not UTF-8 text: byte 0xe9"),
        ("[experiment]\n".encode("utf-16"), "UTF-16 byte-order mark"),
        (bytes(range(256)), "not UTF-8"),
        (b"a = " + b"{b = " * 5000 + b"1" + b"}" * 5000, "nested too deeply"),
    ],
)
def test_unreadable_spec_files_are_input_errors(tmp_path, capsys, content, says):
    spec = tmp_path / "bad.toml"
    spec.write_bytes(content)
    for cmd in (["validate", spec], ["run", spec, "-o", tmp_path / "out"]):
        assert main([str(c) for c in cmd]) == 2
        err = capsys.readouterr().err
        assert says in err and "internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_directory_as_the_spec(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    "value, field, says",
    [
        ('"1e999999s"', "experiment.duration", "too large a time"),
        ('"' + "9" * 5000 + 's"', "experiment.duration", "too large a time"),
    ],
)
def test_huge_numbers_name_their_field(tmp_path, capsys, value, field, says):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC.replace('duration = "2s"', f"duration = {value}"))
    assert main(["validate", str(spec)]) == 2
    assert f"{field}: " in capsys.readouterr().err


@pytest.mark.parametrize(
    "override, field",
    [
        ('flows[0].size="18446744073709551616B"', "flows[0].size"),
        ('flows[0].size="1e20pkt"', "flows[0].size"),
        ('bottleneck.rate="1e19bps"', "bottleneck.rate"),
        ("flows[0].params.x[0]=1", "--set flows[0].params.x[0]"),
        ("flows[0].params.cwnd_gain.x=1", "--set flows[0].params.cwnd_gain.x"),
        ("flows[0].count=true", "flows[0].count"),
        ('bottleneck.loss="0.1"', "bottleneck.loss"),
        ('tcp.mss="1448"', "tcp.mss"),
    ],
)
def test_overflow_and_wrong_types_name_the_users_field(tmp_path, capsys, override, field):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    assert main(["validate", str(spec), "--set", override]) == 2
    err = capsys.readouterr().err
    assert f"{spec}: {field}: " in err, err
    assert "app.finite" not in err and "receiver_access" not in err and "expected u64" not in err


@pytest.mark.parametrize("value", ["{a=1}", "[1]", "[]", "4.9", "true"])
def test_a_kernel_of_the_wrong_type_names_the_field(tmp_path, capsys, value):
    # Before: a table or an array ({a=1}, [1]) reached the kernel release lookup of
    # Tcp's stack defaults, unhashable: "internal error: TypeError", exit 1.
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    assert main(["validate", str(spec), "--set", f"tcp.kernel={value}"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}: tcp.kernel: " in err and "internal error" not in err, err


def test_output_paths_are_checked_before_simulating(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(LONG)  # 3000 s at 200 Mbit/s: seconds of work, were it started
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["run", str(spec), "-o", str(afile / "sub"), "-q"]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if not os.access(ro, os.W_OK):  # root may write anywhere
            assert main(["run", str(spec), "-o", str(ro / "out"), "-q"]) == 2
            assert "not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)
    spec.write_text(LONG + '\n[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp"]\n')
    assert main(["sweep", str(spec), "-o", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_sweep_refuses_a_run_directory_and_bad_worker_counts(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    run_dir = tmp_path / "run"
    assert main(["run", str(spec), "-o", str(run_dir), "-q", "--no-report"]) == 0
    sweep = tmp_path / "sw.toml"
    sweep.write_text(SPEC + '\n[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp"]\n')
    assert main(["sweep", str(sweep), "-o", str(run_dir)]) == 2
    assert "holds a single run" in capsys.readouterr().err
    assert main(["sweep", str(sweep), "-o", str(tmp_path / "sw"), "--workers", "-1"]) == 2
    assert "--workers: must be a whole number >= 1" in capsys.readouterr().err


def test_report_on_corrupt_files_is_an_input_error(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out = tmp_path / "run"
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 0
    (out / "series.parquet").write_bytes(b"not parquet")
    assert main(["report", str(out)]) == 2
    assert "stored results cannot be read" in capsys.readouterr().err
    sw = tmp_path / "sw"
    sw.mkdir()
    (sw / "sweep.json").write_text('{"runs": 5}')
    assert main(["report", str(sw)]) == 2
    # the sweep.json is read through the bounded reader and checked as tcplab's, by name
    assert "sweep.json is not a sweep tcplab wrote" in capsys.readouterr().err


def test_broken_pipe_is_quiet():
    p = subprocess.run(
        f"{sys.executable} -m tcplab algorithms | head -1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert (
        p.stdout.count("\n") == 1 and "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr
    )


def test_idle_run_keeps_the_summary_schema(tmp_path):
    """A flow that starts 1 ms before the end delivers nothing: its share and the Jain
    index are null (documented in the README), and the keys are those of a busy run."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    idle = tmp_path / "idle.toml"
    idle.write_text(SPEC + 'start = "1.999s"\n')
    for s, out in ((spec, "busy"), (idle, "idle")):
        assert main(["run", str(s), "-o", str(tmp_path / out), "-q", "--no-report"]) == 0
    busy, quiet = (
        json.loads((tmp_path / d / "summary.json").read_text()) for d in ("busy", "idle")
    )
    assert set(quiet) == set(busy)
    assert set(quiet["aggregate"]) == set(busy["aggregate"])
    assert set(quiet["flows"][0]) == set(busy["flows"][0])
    assert quiet["flows"][0]["share"] is None and busy["flows"][0]["share"] == 1.0


def _kill_when_tmp_appears(proc, parent: Path, sig) -> None:
    deadline = time.monotonic() + 120
    while not leftovers(parent) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(sig)
    proc.wait(timeout=60)


@pytest.mark.parametrize(
    "sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)]
)
def test_a_killed_run_leaves_nothing_behind_after_the_next_run(tmp_path, sig, code):
    spec = tmp_path / "s.toml"
    spec.write_text(LONG)
    p = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "run", str(spec), "-o", str(tmp_path / "out"), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the run's temporary directory appears only once writing starts; signal during the
    # simulation instead: give it a moment to be inside the engine
    time.sleep(3)
    assert p.poll() is None, "the run ended before the signal"
    t0 = time.monotonic()
    p.send_signal(sig)
    p.wait(timeout=60)
    took = time.monotonic() - t0
    err = p.stderr.read()
    assert p.returncode == code, err
    # -q shows no progress bar, yet the engine checks for signals 1000 times per run
    # (crates/py/src/lib.rs): a quiet run stops within about 2 s.
    assert took < 2.5, f"took {took:.1f} s to stop"
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
    # A SIGKILLed writer's temporary (made here by hand, with a dead pid) is removed by
    # the next run into the same parent.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".tmp-out-p{dead.pid}-abc123"
    stale.mkdir()
    (stale / "series.csv").write_text("half")
    spec.write_text(SPEC)
    assert main(["run", str(spec), "-o", str(tmp_path / "out"), "-q", "--no-report"]) == 0
    assert leftovers(tmp_path) == []


def test_ctrl_c_at_start_up_is_clean(tmp_path):
    """Once tcplab's code runs Ctrl-C exits 130 quietly; before the fix pandas' import
    made a 0.6 s window with a traceback, and on a loaded machine (CI) a Ctrl-C that came
    while pydantic built a class (Python wraps it in a RuntimeError) or while the Rust
    extension imported a module (a panic) gave exit 1: the command now remembers the
    signal (tcplab.interrupts) and reports any failure after it as the interruption.
    The delays count from the end of the interpreter's own start-up (timed here), since
    a signal that lands earlier is Python's to handle: before Python installs its handler
    the process dies of the signal (-2); while ``site`` is still being imported Python
    stops with "Fatal Python error: init_import_site" and exit 1."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    start_up = time.monotonic() - t0
    for delay in (0.3, 0.6, 1.0):
        p = subprocess.Popen(
            [sys.executable, "-m", "tcplab", "validate", str(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(start_up + delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if "Traceback" in err and "python/tcplab/" not in err and p.returncode in (1, -2):
            continue  # still inside Python's own start-up (see above), not tcplab's code
        assert "Traceback" not in err, err
        assert p.returncode in (0, 130, -signal.SIGINT), (p.returncode, err)


# Long enough that the sweep is still running when a test signals it: at 120 s per point
# the four points took 10 s on an idle machine, and a loaded CI run finished them before
# the test's second command had been refused (exit 0 where the SIGTERM's 143 was due).
SWEEP_LONG = (
    LONG.replace('"3000s"', '"900s"')
    + '\n[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp", "3bdp", "4bdp"]\n'
)


def _children(pid: int) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return {int(x) for x in out.split()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def _wait_for(cond, timeout=60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_sweep_workers_die_with_a_killed_parent(tmp_path):
    spec = tmp_path / "sw.toml"
    spec.write_text(SWEEP_LONG)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tcplab",
            "sweep",
            str(spec),
            "-o",
            str(tmp_path / "out"),
            "--workers",
            "2",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    assert _wait_for(lambda: len(workers.update(_children(p.pid)) or workers) >= 2)
    p.kill()
    p.wait()
    assert _wait_for(lambda: not any(_alive(w) for w in workers), timeout=15), (
        "workers outlived the sweep"
    )


def test_a_second_sweep_on_the_same_directory_is_refused_then_resumes(tmp_path):
    spec = tmp_path / "sw.toml"
    spec.write_text(SWEEP_LONG)
    out = tmp_path / "out"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tcplab",
            "sweep",
            str(spec),
            "-o",
            str(out),
            "--workers",
            "1",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert _wait_for(lambda: (out / ".lock").is_file() and "pid" in (out / ".lock").read_text())
    other = tmp_path / "other.toml"
    other.write_text(SPEC + '\n[sweep]\n"bottleneck.buffer" = ["1bdp", "5bdp"]\n')
    second = tcplab("sweep", other, "-o", out, "--workers", "1", "-q")
    assert second.returncode == 2
    assert f"in use by another tcplab sweep (pid {first.pid})" in second.stderr
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 143
    # The first sweep's half-run is gone, and the other grid now runs and labels its table.
    third = tcplab("sweep", other, "-o", out, "--workers", "1", "-q")
    assert third.returncode == 0, third.stderr
    plan = json.loads((out / "sweep.json").read_text())
    assert plan["axes"] == {"bottleneck.buffer": ["1bdp", "5bdp"]}
    assert not any(p.name.startswith(".tmp-") for p in (out / "runs").iterdir())
