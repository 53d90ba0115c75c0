"""Failures found by a hardening review, one test each: output paths tcplab must not
delete, damaged cached runs, full disks, empty or oversized inputs, special files, bad
API arguments; each reproduces the reported failure."""

import json
import os

import pytest
import tcplab
import tomllib
from tcplab.cli.app import main
from tcplab.errors import SpecError

SPEC = """
[experiment]
duration = "1s"

[bottleneck]
rate = "10Mbps"
delay = "5ms"

[[flows]]
cc = "reno"
rtt = "20ms"
"""

SWEEP = (
    SPEC
    + """
[sweep]
"flows[0].rtt" = ["20ms", "40ms"]
"""
)


def _toml(text: str) -> dict:
    return tomllib.loads(text)


# ------------------------------------------------------------------ data loss


def test_api_run_refuses_to_delete_a_file_at_out(fake_engine, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("mine")
    with pytest.raises(SpecError, match="out: .*is a file"):
        tcplab.run(_toml(SPEC), out=target)
    assert target.read_text() == "mine"


def test_api_run_refuses_to_delete_a_foreign_directory(fake_engine, tmp_path):
    target = tmp_path / "project"
    target.mkdir()
    (target / "main.py").write_text("print(1)")
    with pytest.raises(SpecError, match="not a tcplab run directory"):
        tcplab.run(_toml(SPEC), out=target)
    assert (target / "main.py").read_text() == "print(1)"


def test_api_run_replaces_its_own_run(fake_engine, tmp_path):
    target = tmp_path / "run"
    tcplab.run(_toml(SPEC), out=target, report=False)
    tcplab.run(_toml(SPEC), out=target, report=False, seed=7)
    assert json.loads((target / "manifest.json").read_text())["seed"] == 7


def test_cli_run_refuses_a_run_directory_with_the_users_files_in_it(
    fake_engine, tmp_path, write_spec, capsys
):
    spec = write_spec(SPEC)
    out = tmp_path / "out"
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 0
    (out / "main.py").write_text("print(1)")
    (out / "src").mkdir()
    (out / "src" / "lib.py").write_text("x = 1")
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "main.py" in err and "src/" in err and "did not write" in err
    assert (out / "main.py").exists() and (out / "src" / "lib.py").exists()


def test_cli_run_refuses_a_directory_whose_manifest_is_not_ours(
    fake_engine, tmp_path, write_spec, capsys
):
    out = tmp_path / "webapp"
    out.mkdir()
    (out / "manifest.json").write_text('{"name": "my app", "icons": []}')
    (out / "index.html").write_text("<html>")
    assert main(["run", str(write_spec(SPEC)), "-o", str(out), "-q", "--no-report"]) == 2
    assert "not a tcplab run directory" in capsys.readouterr().err
    assert (out / "index.html").exists()


def test_reproduce_docs_keeps_the_users_files_in_results(tmp_path):
    from tcplab.reproduce.report import copy_report

    src = tmp_path / "report"
    (src / "plots").mkdir(parents=True)
    (src / "plots" / "a.png").write_bytes(b"png")
    for ext in ("md", "html"):
        (src / f"report.{ext}").write_text("![](plots/a.png)")
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    (docs / "results" / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match="notes.txt"):
        copy_report(src, docs)
    assert (docs / "results" / "notes.txt").read_text() == "mine"
    # What tcplab wrote itself it replaces.
    (docs / "results" / "notes.txt").unlink()
    copy_report(src, docs)
    (src / "plots" / "a.png").write_bytes(b"png2")
    copy_report(src, docs)
    assert (docs / "results" / "a.png").read_bytes() == b"png2"
    assert "results/a.png" in (docs / "RESULTS.md").read_text()


@pytest.mark.parametrize("damage", ["no-manifest", "a-file", "edited", "truncated", "garbage"])
def test_sweep_recomputes_a_damaged_cached_run(fake_engine, tmp_path, damage):
    spec = tmp_path / "s.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "sweep"
    first = tcplab.sweep(spec, out, workers=1)
    assert len(first) == 2
    victim = out / "runs" / first["digest"][0]
    good_util = first["utilization"][0]
    if damage == "no-manifest":
        (victim / "manifest.json").unlink()
    elif damage == "a-file":
        import shutil

        shutil.rmtree(victim)
        victim.write_text("x")
    elif damage == "edited":
        doc = json.loads((victim / "summary.json").read_text())
        doc["aggregate"]["utilization"] = 0.123
        (victim / "summary.json").write_text(json.dumps(doc))
    elif damage == "truncated":
        data = (victim / "series.parquet").read_bytes()
        (victim / "series.parquet").write_bytes(data[: len(data) // 2])
    else:
        (victim / "summary.json").write_text("{garbage")
    runs_before = fake_engine.CALLS["run"]
    again = tcplab.sweep(spec, out, workers=1)
    assert fake_engine.CALLS["run"] == runs_before + 1
    assert len(again) == 2
    assert again["utilization"][0] == pytest.approx(good_util)
    assert victim.is_dir() and (victim / "manifest.json").is_file()


# ------------------------------------------------------------------ signals

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

# About 15 s of engine work: a signal lands inside the simulation on any machine.
LONG = SPEC.replace('duration = "1s"', 'duration = "3000s"').replace("10Mbps", "200Mbps")


@pytest.mark.engine
def test_sigterm_stops_a_parallel_sweep_at_once(tmp_path):
    """`sweep --workers 2` used to run every queued run before exiting 143."""
    spec = tmp_path / "s.toml"
    spec.write_text(
        LONG + '\n[sweep]\n"flows[0].rtt" = ["20ms", "30ms", "40ms", "50ms", "60ms", "70ms"]\n'
    )
    out = tmp_path / "sweep"
    p = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "sweep", str(spec), "-o", str(out), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (out / "runs").is_dir() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    took = time.monotonic() - t0
    err = p.stderr.read()
    assert p.returncode == 143, err
    # Each run takes about 15 s: waiting for the six queued ones took over a minute.
    assert took < 10, f"took {took:.1f} s"
    assert "Traceback" not in err


# ------------------------------------------------------------------ silent wrong results


def test_rate_events_at_one_instant_count_in_file_order():
    from tcplab.analysis import metrics as m

    events = [(1.0, 100e6), (1.0, 1e6)]  # the engine ends at 1 Mbit/s from 1 s on
    assert m.capacity_bits(10e6, events, 3.0) == pytest.approx(10e6 + 2e6)
    assert list(m.rate_at([0.5, 1.0, 2.0], 10e6, events)) == [10e6, 1e6, 1e6]


@pytest.mark.engine
def test_rate_events_at_one_instant_give_a_true_utilisation(tmp_path):
    spec = SPEC.replace('duration = "1s"', 'duration = "3s"') + (
        '\n[[events]]\nat = "1s"\nrate = "100Mbps"\n\n[[events]]\nat = "1s"\nrate = "1Mbps"\n'
    )
    res = tcplab.run(_toml(spec))
    assert 0.5 < res.aggregate["utilization"] <= 1.0


def test_window_utilisation_counts_a_flow_only_while_it_runs(fake_engine):
    """A flow that joins halfway through the window was counted as running throughout:
    1.25 on a 10 Mbit/s link whose whole-run utilisation was 0.96."""
    spec = _toml(
        SPEC.replace('duration = "1s"', 'duration = "10s"\nanalysis = ["2s", "10s"]')
        + '\n[[flows]]\ncc = "reno"\nrtt = "20ms"\nstart = "5s"\n'
    )
    res = tcplab.run(spec)
    window = res.summary_json["window"]["aggregate"]["utilization"]
    assert 0.0 < window <= 1.0 + 1e-9
    assert window == pytest.approx(res.aggregate["utilization"], rel=0.1)


@pytest.mark.engine
def test_a_run_shorter_than_its_trace_period_has_a_true_utilisation(tmp_path):
    """12 Mbit/s for the first second of a 60 s period, then nothing: the period's mean
    (0.2 Mbit/s) made a 2 s run's utilisation 8.65 and its queueing delay 634 ms."""
    trace = tmp_path / "burst"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 1001)) + "60000\n")
    spec = _toml(
        SPEC.replace('duration = "1s"', 'duration = "2s"').replace(
            'rate = "10Mbps"', f'rate = {{ trace = "{trace}" }}\nbuffer = "100pkt"'
        )
    )
    res = tcplab.run(spec)
    assert 0.0 < res.aggregate["utilization"] <= 1.0
    # 100 packets at the run's mean rate (6 Mbit/s) wait 200 ms at the most.
    assert res.aggregate["mean_queueing_delay_ms"] <= 200.0


@pytest.mark.engine
def test_utilisation_counts_only_the_flows_that_cross_each_link():
    """Flows over a faster [[links]] entry only, the bottleneck idle: 4.38 before."""
    spec = _toml(
        SPEC.replace('duration = "1s"', 'duration = "3s"')
        .replace('rtt = "20ms"', 'rtt = "20ms"\npath = ["core"]')
        .replace("[[flows]]", '[[links]]\nname = "core"\nrate = "50Mbps"\n\n[[flows]]')
    )
    res = tcplab.run(spec)
    assert res.aggregate["utilization"] == 0.0
    core = res.summary_json["links"]["core"]
    assert core["flows"] == 1 and 0.3 < core["utilization"] <= 1.0


# ------------------------------------------------------------------ crashes, messages


def test_a_full_disk_in_a_serial_sweep_says_so_and_tabulates_what_finished(
    fake_engine, tmp_path, monkeypatch, capsys
):
    import errno

    from tcplab.storage import directory

    real = directory._write_frame
    calls = [0]

    def fill_up(df, stem, csv=True):
        calls[0] += 1
        if calls[0] > 2:  # the first run's two frames fit, the second run's do not
            raise OSError(errno.ENOSPC, "No space left on device")
        real(df, stem, csv)

    monkeypatch.setattr(directory, "_write_frame", fill_up)
    spec = tmp_path / "s.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "sweep"
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 1
    err = capsys.readouterr().err
    assert "no space left on the device" in err and "internal error" not in err
    assert str(out / "runs") in err
    import pandas as pd

    assert len(pd.read_csv(out / "table.csv")) == 1
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".tmp-")]


def test_a_file_named_runs_in_a_sweep_directory_is_an_input_error(fake_engine, tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "sweep"
    out.mkdir()
    # a sweep.json tcplab wrote (an empty grid), so that the directory is a sweep's
    (out / "sweep.json").write_text(
        '{"tcplab_version": "0.5.1", "axes": {}, "repeat": 1, "runs": []}'
    )
    (out / "runs").write_text("not a directory")
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 2
    assert "runs should be a directory" in capsys.readouterr().err


def test_report_of_a_run_where_a_flow_has_no_rtt_nor_goodput(tmp_path, write_spec, capsys):
    """A 1 bps bottleneck losing nearly everything: summary.json holds nulls for the
    flow's RTT and share, and `tcplab report` / `load(DIR).report()` raised TypeError."""
    spec = write_spec(
        SPEC.replace('"10Mbps"', '"1bps"').replace(
            'delay = "5ms"', 'delay = "5ms"\nloss = 0.999999'
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 0
    assert json.loads((out / "summary.json").read_text())["flows"][0]["mean_rtt_ms"] is None
    assert main(["report", str(out)]) == 0
    assert "internal error" not in capsys.readouterr().err
    tcplab.load(out).report()


def _validate(write_spec, text, capsys):
    code = main(["validate", str(write_spec(text))])
    return code, capsys.readouterr().err


def test_an_empty_check_metric_is_refused(fake_engine, write_spec, capsys):
    code, err = _validate(
        write_spec, SPEC + '\n[[checks]]\nmetric = ""\nop = ">"\nvalue = 0.5\n', capsys
    )
    assert code == 2 and "checks[0].metric" in err


@pytest.mark.parametrize(
    "extra, field",
    [
        ('\n[[links]]\nname = "core"\nrate = "20000Gbps"\n', "links[0].rate"),
        ('\n[[sources]]\nrate = "1000000Gbps"\n', "sources[0].rate"),
    ],
)
def test_link_and_source_rates_beyond_the_engine_are_refused(
    fake_engine, write_spec, capsys, extra, field
):
    code, err = _validate(write_spec, SPEC + extra, capsys)
    assert code == 2 and field in err and "Traceback" not in err


WORKLOAD = """
[[workloads]]
cc = "reno"
rtt = "20ms"
rate = 5
size = SIZE
"""


def test_workload_sizes_near_2_53_bytes_are_no_internal_error(fake_engine, write_spec, capsys):
    size = '{ dist = "exponential", mean = "9007199254740000B" }'
    text = SPEC.split("[[flows]]")[0] + WORKLOAD.replace("SIZE", size)
    code, err = _validate(write_spec, text, capsys)
    assert code == 0, err


@pytest.mark.parametrize("big", ["inf", "1e30"])
def test_a_cdf_with_an_infinite_size_is_an_input_error(
    fake_engine, tmp_path, write_spec, capsys, big
):
    cdf = tmp_path / "cdf.txt"
    cdf.write_text(f"100 0.5\n{big} 1\n")
    size = f'{{ dist = "empirical", cdf = "{cdf}" }}'
    text = SPEC.split("[[flows]]")[0] + WORKLOAD.replace("SIZE", size)
    code, err = _validate(write_spec, text, capsys)
    assert code == 2 and "workloads[0].size" in err and "2**53" in err


def test_devices_and_fifos_are_refused_not_read(fake_engine, tmp_path, write_spec, capsys):
    assert main(["run", "/dev/zero", "-o", str(tmp_path / "o")]) == 2
    assert "not a regular file" in capsys.readouterr().err
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    assert main(["validate", str(fifo)]) == 2  # used to block forever on open()
    assert "not a regular file" in capsys.readouterr().err
    size = '{ dist = "empirical", cdf = "/dev/zero" }'
    code, err = _validate(
        write_spec, SPEC.split("[[flows]]")[0] + WORKLOAD.replace("SIZE", size), capsys
    )
    assert code == 2 and "not a regular file" in err


@pytest.mark.parametrize("overrides", [["bottleneck.rate=5Mbps"], "x", {1: 2}])
def test_api_overrides_of_the_wrong_shape_are_named(fake_engine, overrides):
    with pytest.raises(SpecError, match="overrides: must be a dict"):
        tcplab.run(_toml(SPEC), overrides=overrides)


def test_api_bad_progress_is_named_and_its_exception_is_the_callers(fake_engine):
    with pytest.raises(SpecError, match="progress: must be a function"):
        tcplab.run(_toml(SPEC), progress=5)

    class Mine(Exception):
        pass

    def progress(t):
        raise Mine("from the notebook")

    with pytest.raises(Mine, match="from the notebook"):
        tcplab.run(_toml(SPEC), progress=progress)


def test_red_without_thresholds_takes_tcs_default_or_names_the_field(
    fake_engine, write_spec, capsys
):
    """Found by the feature fuzz: the engine config held nulls for RED's thresholds. Now
    tc's defaults apply (a quarter of the limit); with no limit to take a quarter of, the
    field is named."""
    code, err = _validate(
        write_spec,
        SPEC.replace(
            'delay = "5ms"', 'delay = "5ms"\nbuffer = "unlimited"\naqm = { kind = "red" }'
        ),
        capsys,
    )
    assert code == 2 and "bottleneck.aqm.max" in err and "engine config" not in err


# ------------------------------------------------------------------ kernel backend


def _fake_tcp_info(monkeypatch, **fields):
    from tcplab.backends.kernel import tcpinfo

    info = dict.fromkeys(tcpinfo.NAMES, 0)
    info.update(fields)
    monkeypatch.setattr(tcpinfo, "tcp_info", lambda sock: info)
    return tcpinfo


def test_kernel_no_rtt_sample_yet_is_nan_not_zero(monkeypatch):
    tcpinfo = _fake_tcp_info(monkeypatch, rtt_us=0, snd_cwnd=10)
    row = tcpinfo.sample(None, bbr=False)
    assert row["srtt_ms"] != row["srtt_ms"]
    row = _fake_tcp_info(monkeypatch, rtt_us=20_000).sample(None, bbr=False)
    assert row["srtt_ms"] == 20.0


def test_kernel_syn_retransmissions_do_not_count_as_data(monkeypatch):
    """7 retransmissions (SYNs among them) against 5 data segments made a rate of 1.4."""
    row = _fake_tcp_info(monkeypatch, total_retrans=7, data_segs_out=5).sample(None, bbr=False)
    assert row["total_retrans"] <= row["data_segs_out"]


def test_a_lagging_emulator_is_flagged():
    from tcplab.analysis.caveats import run_warnings

    late = {"events": 1000, "mean_ns": 3e6, "max_ns": 40_000_000, "over_100us": 900}
    # 800 of 1000 over 1 ms: the links ran slow.
    (slow,) = run_warnings({"emulator": {"lateness": {**late, "over_1ms": 800}}})
    assert "ran slower" in slow
    # 2 of 1000 over 1 ms but one wake-up 40 ms late (>= HyStart's 4 ms): the milder warning.
    (moved,) = run_warnings({"emulator": {"lateness": {**late, "over_1ms": 2}}})
    assert "late at times" in moved and "ran slower" not in moved
    # 1 of 1000 over 1 ms (0.1 %, not above it) and a 3 ms worst case: nothing to say.
    on_time = {**late, "over_1ms": 1, "max_ns": 3_000_000}
    assert not run_warnings({"emulator": {"lateness": on_time}})
    assert not run_warnings({})


def test_a_killed_emulator_says_how(tmp_path):
    from tcplab.backends.kernel.run import exit_message

    (tmp_path / "emu.err").write_text("")
    msg = exit_message("emulator", -9, tmp_path / "emu.err")
    assert "SIGKILL" in msg and "out-of-memory" in msg and "wrote nothing" in msg
    (tmp_path / "emu.err").write_text("thread 'main' panicked at tun.rs")
    assert "tun.rs" in exit_message("emulator", 101, tmp_path / "emu.err")


# ------------------------------------------------------------------ resources bounded

BASE = SPEC.split("[[flows]]")[0]
FLOW = '\n[[flows]]\ncc = "reno"\nrtt = "20ms"\n'


@pytest.mark.parametrize(
    "text, field, says",
    [
        (BASE + FLOW.replace('"20ms"\n', '"20ms"\ncount = 10000\n') * 20, "flows", "flows"),
        (
            BASE
            + WORKLOAD.replace("rate = 5", "rate = 1000000").replace(
                "SIZE", '{ dist = "fixed", value = "10000B" }'
            ),
            "workloads",
            "expected arrivals",
        ),
        (
            BASE
            + WORKLOAD.replace("rate = 5", "load = 10").replace(
                "SIZE", '{ dist = "fixed", value = "1B" }'
            ),
            "workloads",
            "expected arrivals",
        ),
        (
            BASE + FLOW + 'onoff = { on = "1ns", off = "1ns" }\n',
            "onoff",
            "switch on and off",
        ),
        (
            SPEC.replace('duration = "1s"', 'duration = "31536000s"\nsample_interval = "1000s"'),
            "experiment.duration",
            "packets",
        ),
    ],
    ids=["200k-flows", "poisson-1e6", "load10-1B", "onoff-1ns", "one-year"],
)
def test_runaway_specs_are_refused_by_validate(fake_engine, write_spec, capsys, text, field, says):
    t0 = time.monotonic()
    code, err = _validate(write_spec, text, capsys)
    assert code == 2, err
    assert f"{field}:" in err and says in err and "the limit is" in err
    assert time.monotonic() - t0 < 10  # refused from an estimate, not by trying


def test_run_says_it_ran_the_base_point_of_a_spec_with_a_sweep(fake_engine, tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SWEEP)
    assert main(["run", str(spec), "-o", str(tmp_path / "r"), "-q", "--no-report"]) == 0
    err = capsys.readouterr().err
    assert "base point only" in err and f"tcplab sweep {spec} -o DIR" in err


@pytest.mark.parametrize(
    "metric, why",
    [
        ("share[foo]", "no flow runs 'foo'"),
        ("share[bbrr]", "no flow runs 'bbrr'"),
        ("share[flow1]", "the spec has 1 flows"),
        ("window.share[reno]", "window metrics need"),
        ("no_such_metric", "unknown aggregate metric"),
    ],
)
def test_a_sweep_metric_no_run_has_is_refused(fake_engine, tmp_path, capsys, metric, why):
    # They validated against a pattern and swept into an empty column without a word.
    spec = tmp_path / "s.toml"
    spec.write_text(SWEEP + f'metrics = ["{metric}"]\n')
    assert main(["sweep", str(spec), "-o", str(tmp_path / "sw"), "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert "sweep.metrics" in err and why in err
    assert not (tmp_path / "sw").exists()


def test_per_flow_shares_are_sweep_metrics_with_a_column(tmp_path):
    # share[flow0] is the natural RTT-fairness metric: a column of the table, each run's
    # first flow's share (two flows: the two shares add up to 1 in every run).
    spec = tmp_path / "s.toml"
    spec.write_text(
        SPEC
        + '[[flows]]\ncc = "reno"\nrtt = "40ms"\n'
        + '[sweep]\n"flows[0].rtt" = ["20ms", "80ms"]\nmetrics = ["share[flow0]", "share[flow1]"]\n'
    )
    table = tcplab.sweep(spec, tmp_path / "sw", workers=1)
    total = table["share[flow0]"] + table["share[flow1]"]
    assert len(table) == 2 and total.tolist() == pytest.approx([1.0, 1.0])


def test_compare_of_a_run_whose_summary_is_dev_zero_is_refused_not_read(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", str(spec), "-o", str(a), "-q", "--no-report"]) == 0
    assert main(["run", str(spec), "-o", str(b), "-q", "--no-report"]) == 0
    (b / "summary.json").unlink()
    (b / "summary.json").symlink_to("/dev/zero")
    assert main(["compare", str(a), str(b)]) == 2
    assert "summary.json" in capsys.readouterr().err
    assert main(["report", str(b)]) == 2  # read through the same bounded reader
