"""The Python plumbing (run directory, report redraw, CLI errors, sweep cache) on the
stand-in engine of tests/fake_engine.py; tests/backends/test_engine.py repeats the essentials on
the real simulator."""

import json

import pandas as pd
import pytest
import tcplab
from tcplab.cli.app import main
from tcplab.errors import SpecError

SPEC = """
[experiment]
name = "plumbing"
duration = "2s"
sample_interval = "100ms"

[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"

[[flows]]
cc = "reno"
rtt = "20ms"
count = 2
"""

SWEEP = (
    SPEC
    + """
[sweep]
repeat = 2
"bottleneck.buffer" = ["1bdp", "2bdp"]
"""
)

EXPECTED_FILES = {
    "spec.toml",
    "world.json",
    "summary.json",
    "manifest.json",
    "series.parquet",
    "series.csv",
    "queue.parquet",
    "queue.csv",
    "report.png",
    "report.html",
}


def test_run_writes_every_file_with_digests(fake_engine, write_spec, tmp_path):
    out = tmp_path / "res"
    r = tcplab.run(write_spec(SPEC), out)
    assert {p.name for p in out.iterdir()} == EXPECTED_FILES
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["sha256"]) == EXPECTED_FILES - {"manifest.json"}
    assert manifest["seed"] == 1 and manifest["tcplab_version"] == tcplab.__version__
    # the fake engine shares 10 Mbit/s equally: each flow 5 Mbit/s over 2 s
    assert r.summary["goodput_bps"].tolist() == pytest.approx([5e6, 5e6], rel=1e-3)
    assert r.aggregate["jain_index"] == pytest.approx(1.0)


def test_run_directory_loads_back(fake_engine, write_spec, tmp_path):
    out = tmp_path / "res"
    r = tcplab.run(write_spec(SPEC), out)
    back = tcplab.load(out)
    pd.testing.assert_frame_equal(back.series, r.series)
    assert back.aggregate == json.loads((out / "summary.json").read_text())["aggregate"]
    assert back.spec == r.spec


def test_report_command_redraws_from_stored_files(fake_engine, write_spec, tmp_path):
    out = tmp_path / "res"
    tcplab.run(write_spec(SPEC), out)
    (out / "report.png").unlink()
    calls = fake_engine.CALLS["run"]
    assert main(["report", str(out)]) == 0
    assert (out / "report.png").stat().st_size > 10_000
    assert fake_engine.CALLS["run"] == calls  # nothing re-simulated


def test_report_pdf_only_on_request_and_deterministic(fake_engine, write_spec, tmp_path):
    # report.png and report.html by default; report.pdf with --pdf, listed in
    # the manifest and the same bytes from two runs of the same spec.
    spec = str(write_spec(SPEC))
    assert main(["run", spec, "-o", str(tmp_path / "plain"), "-q"]) == 0
    assert not (tmp_path / "plain" / "report.pdf").exists()
    for name in ("a", "b"):
        assert main(["run", spec, "-o", str(tmp_path / name), "-q", "--pdf"]) == 0
    pdf = (tmp_path / "a" / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf == (tmp_path / "b" / "report.pdf").read_bytes()
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert set(manifest["sha256"]) == EXPECTED_FILES - {"manifest.json"} | {"report.pdf"}
    tcplab.run(spec, tmp_path / "api", pdf=True)
    assert (tmp_path / "api" / "report.pdf").read_bytes() == pdf


def test_pdf_without_a_report_is_refused(fake_engine, write_spec, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["run", str(write_spec(SPEC)), "-o", str(out), "--no-report", "--pdf"]) == 2
    assert "--pdf: report.pdf is part of the report" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SpecError, match="pdf: report.pdf is part of the report"):
        tcplab.run(write_spec(SPEC), out, report=False, pdf=True)
    assert not out.exists() and fake_engine.CALLS["run"] == 0


def test_redraw_keeps_or_adds_the_pdf(fake_engine, write_spec, tmp_path):
    from tcplab.storage.ownership import run_problem

    out = tmp_path / "res"
    tcplab.run(write_spec(SPEC), out)
    assert main(["report", str(out)]) == 0
    assert not (out / "report.pdf").exists() and run_problem(out) is None
    assert main(["report", str(out), "--pdf"]) == 0
    assert "report.pdf" in json.loads((out / "manifest.json").read_text())["sha256"]
    assert run_problem(out) is None  # the manifest's digests follow the redraw
    # A redraw without --pdf redraws the run's PDF too: none is left older than its PNG.
    (out / "report.pdf").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.pdf").is_file() and run_problem(out) is None


def test_sweep_reuses_runs_with_or_without_a_pdf(fake_engine, write_spec, tmp_path):
    # The report files are not part of a run's digest: a cached run without a PDF is
    # neither damaged nor a different result when a later sweep asks for PDFs, and back.
    spec = write_spec(SWEEP)
    out = tmp_path / "sw"
    table = tcplab.sweep(spec, out, workers=1, pdf=True)
    assert fake_engine.CALLS["run"] == 4
    runs = sorted((out / "runs").iterdir())
    assert all((d / "report.pdf").is_file() and (d / "report.png").is_file() for d in runs)
    pd.testing.assert_frame_equal(tcplab.sweep(spec, out, workers=1), table)
    assert fake_engine.CALLS["run"] == 4
    plain = tmp_path / "sw2"
    tcplab.sweep(spec, plain, workers=1)
    assert not list(plain.glob("runs/*/report.*"))
    assert main(["sweep", str(spec), "-o", str(plain), "--workers", "1", "--pdf", "-q"]) == 0
    assert fake_engine.CALLS["run"] == 8  # 4 for each directory, none recomputed


def test_report_pdf_of_a_sweep_directory_is_refused(fake_engine, write_spec, tmp_path, capsys):
    out = tmp_path / "sw"
    tcplab.sweep(write_spec(SWEEP), out, workers=1)
    assert main(["report", str(out), "--pdf"]) == 2
    assert "--pdf: a sweep's report (summary plots, report.html) has no PDF" in (
        capsys.readouterr().err
    )
    assert main(["report", str(out)]) == 0


def test_cli_spec_error_exits_2_and_leaves_no_output(fake_engine, write_spec, tmp_path, capsys):
    spec = write_spec(SPEC.replace('cc = "reno"', 'cc = "bbbr"'))
    out = tmp_path / "new" / "res"
    assert main(["run", str(spec), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}: flows[0].cc: unknown algorithm 'bbbr'; known: reno, cubic, bbr" in err
    assert not (tmp_path / "new").exists()


def test_cli_run_refuses_to_overwrite_a_foreign_directory(
    fake_engine, write_spec, tmp_path, capsys
):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["run", str(write_spec(SPEC)), "-o", str(out), "-q"]) == 2
    assert (out / "notes.txt").read_text() == "keep me"


def test_engine_failure_is_reported_without_a_traceback(
    fake_engine, write_spec, tmp_path, capsys, monkeypatch
):
    def boom(*a, **k):
        raise RuntimeError("internal: event queue corrupted")

    monkeypatch.setattr(fake_engine, "run", boom)
    out = tmp_path / "res"
    assert main(["run", str(write_spec(SPEC)), "-o", str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert (
        "tcplab: error: the simulator failed: RuntimeError: internal: event queue corrupted" in err
    )
    assert "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".tmp-*"))


def test_validate_prints_resolved_spec(fake_engine, write_spec, capsys):
    assert main(["validate", str(write_spec(SPEC))]) == 0
    out = capsys.readouterr().out
    # 1 BDP = 10e6 * 0.020 / 8 = 25 000 bytes / 1500 = 16.7 -> 17 packets
    assert 'buffer = "17pkt"' in out
    assert 'bdp_rtt = "20ms"' in out
    assert 'receiver_access = { rate = "1Gbps", delay = "5ms"' in out


def test_algorithms_lists_parameters(fake_engine, capsys):
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert "cwnd_gain (float, default 2.0 [0.1, 10]): cwnd gain" in out


def test_sweep_key_that_names_no_field(fake_engine, write_spec, tmp_path, capsys):
    spec = write_spec(SWEEP.replace('"bottleneck.buffer"', '"bottleneck.bufer"'))
    out = tmp_path / "sw"
    assert main(["sweep", str(spec), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{spec}: sweep.bottleneck.bufer: 'bottleneck.bufer' names no field; bottleneck has: rate, delay"
        in err
    )
    assert not out.exists()


def test_sweep_runs_grid_and_never_recomputes(fake_engine, write_spec, tmp_path):
    spec = write_spec(SWEEP)
    out = tmp_path / "sw"
    table = tcplab.sweep(spec, out, workers=1)
    assert len(table) == 4 and fake_engine.CALLS["run"] == 4
    assert sorted(table["seed"]) == [1, 1, 2, 2]
    assert (out / "summary_bottleneck.buffer.png").is_file()
    again = tcplab.sweep(spec, out, workers=1)
    assert fake_engine.CALLS["run"] == 4  # all cached
    pd.testing.assert_frame_equal(again, table)


def test_a_sweep_without_plots_writes_its_table_and_drops_older_plots(
    fake_engine, write_spec, tmp_path
):
    from tcplab.runs.sweep import run_sweep

    spec = write_spec(SWEEP)
    out = tmp_path / "sw"
    tcplab.sweep(spec, out, workers=1)
    assert (out / "summary_bottleneck.buffer.png").is_file() and (out / "report.html").is_file()
    table = run_sweep(spec, out, workers=1, plots=False)
    assert fake_engine.CALLS["run"] == 4  # the runs are the cached ones
    assert len(pd.read_csv(out / "table.csv")) == len(table) == 4
    # plots older than the table, which this sweep wrote, are removed, not left stale
    assert not (out / "summary_bottleneck.buffer.png").exists()
    assert not (out / "report.html").exists()
    assert not (out / "throughput_delay.png").exists()


def test_a_sweep_without_csv_stores_the_same_runs_as_parquet_only(
    fake_engine, write_spec, tmp_path
):
    # tcplab reproduce's runs (runner.py _entry_sweep): no series/queue CSV, the manifest
    # lists what is there, and every other file is byte for byte the CSV sweep's.
    from tcplab.runs.sweep import run_sweep

    spec = write_spec(SWEEP)
    with_csv = run_sweep(spec, tmp_path / "a", workers=1)
    without = run_sweep(spec, tmp_path / "b", workers=1, csv=False)
    pd.testing.assert_frame_equal(with_csv, without)
    runs_a = sorted((tmp_path / "a" / "runs").iterdir())
    runs_b = sorted((tmp_path / "b" / "runs").iterdir())
    assert [r.name for r in runs_a] == [r.name for r in runs_b] and len(runs_b) == 4
    for a, b in zip(runs_a, runs_b, strict=True):
        files_a = {p.name for p in a.iterdir()}
        files_b = {p.name for p in b.iterdir()}
        assert files_a - files_b == {"series.csv", "queue.csv"}
        assert files_b <= files_a and "series.parquet" in files_b
        listed = json.loads((b / "manifest.json").read_text())["sha256"]
        assert set(listed) == files_b - {"manifest.json"}
        for name in files_b - {"manifest.json"}:
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # A cached run is reused whichever way it was stored.
    run_sweep(spec, tmp_path / "b", workers=1)
    assert fake_engine.CALLS["run"] == 8


def test_a_sweep_asks_git_once_and_each_run_records_the_commit(
    fake_engine, write_spec, tmp_path, monkeypatch
):
    import json

    from tcplab.runs import executors

    asked = []

    def commit() -> str:
        asked.append(1)
        return "abc123-dirty"

    monkeypatch.setattr(executors, "git_commit", commit)
    tcplab.sweep(write_spec(SWEEP), tmp_path / "sw", workers=1)
    manifests = sorted((tmp_path / "sw" / "runs").glob("*/manifest.json"))
    assert len(manifests) == 4 and len(asked) == 1
    assert {json.loads(m.read_text())["git_commit"] for m in manifests} == {"abc123-dirty"}


def test_sweep_digest_depends_on_resolved_spec_and_seed(fake_engine, write_spec):
    from tcplab.runs.sweep import plan_sweep
    from tcplab.specs.load import read_toml

    raw = read_toml(write_spec(SWEEP))
    plan = plan_sweep(raw)
    assert len({j.digest for j in plan.jobs}) == 4
    assert [j.digest for j in plan_sweep(raw).jobs] == [j.digest for j in plan.jobs]
    # "1bdp" and the same size in packets (17) resolve to the same run
    raw2 = dict(raw, sweep={"repeat": 2, "bottleneck.buffer": ["17pkt", "2bdp"]})
    assert [j.digest for j in plan_sweep(raw2).jobs] == [j.digest for j in plan.jobs]


@pytest.mark.parametrize(
    "setting, first, second",
    [
        ("analysis", '["0s", "1s"]', '["1s", "2s"]'),
        ("windows", '{ early = ["0s", "1s"] }', '{ early = ["0s", "500ms"] }'),
    ],
)
def test_a_changed_analysis_setting_is_a_new_run(
    fake_engine, write_spec, tmp_path, setting, first, second
):
    # The sweep cache must not serve a summary computed under other analysis settings
    # (BBR' Fig. 10b showed 'undefined' from runs cached before its windows).
    def sweep_with(value: str):
        text = SWEEP.replace(
            'sample_interval = "100ms"', f'sample_interval = "100ms"\n{setting} = {value}'
        )
        return tcplab.sweep(write_spec(text), tmp_path / "sw", workers=1)

    sweep_with(first)
    assert fake_engine.CALLS["run"] == 4
    sweep_with(first)
    assert fake_engine.CALLS["run"] == 4  # the same settings: all cached
    sweep_with(second)
    assert fake_engine.CALLS["run"] == 8  # new settings: every run recomputed
    summaries = [
        json.loads(p.read_text()) for p in (tmp_path / "sw" / "runs").glob("*/summary.json")
    ]
    key = "window" if setting == "analysis" else "windows"
    blocks = {
        (b["from_s"], b["to_s"])
        for b in (s[key] if key == "window" else s[key]["early"] for s in summaries)
    }
    # Both settings' runs are stored, each summary with its own window.
    assert blocks == ({(0.0, 1.0), (1.0, 2.0)} if key == "window" else {(0.0, 1.0), (0.0, 0.5)})


def test_sweep_keeps_going_when_one_run_fails(
    fake_engine, write_spec, tmp_path, monkeypatch, capsys
):
    real = fake_engine.run

    def flaky(config_json, progress=None, max_packets_held=None):
        if '"seed":2' in config_json:
            raise RuntimeError("internal: boom")
        return real(config_json, progress, max_packets_held)

    monkeypatch.setattr(fake_engine, "run", flaky)
    out = tmp_path / "sw"
    assert main(["sweep", str(write_spec(SWEEP)), "-o", str(out), "--workers", "1", "-q"]) == 1
    assert "2 of 4 runs failed" in capsys.readouterr().err
    assert len(pd.read_csv(out / "table.csv")) == 2
    monkeypatch.setattr(fake_engine, "run", real)
    table = tcplab.sweep(write_spec(SWEEP), out, workers=1)  # retry: only the two failed ones run
    # 2 simulated in the first pass (the seed-2 runs failed before simulating), 2 on retry
    assert len(table) == 4 and fake_engine.CALLS["run"] == 2 + 2


def test_sweep_metric_must_exist(fake_engine, write_spec, tmp_path, capsys):
    spec = write_spec(SWEEP + 'metrics = ["jain_idx"]\n')
    assert main(["sweep", str(spec), "-o", str(tmp_path / "sw")]) == 2
    err = capsys.readouterr().err
    assert (
        "sweep.metrics: unknown aggregate metric 'jain_idx'; known: " in err and "jain_index" in err
    )
    assert not (tmp_path / "sw").exists()


def test_shell_completion_names_every_subcommand(capsys):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    for command in ("run", "sweep", "reproduce", "compare", "algorithms", "doctor", "--backend"):
        assert command in script
    import subprocess

    # The script is valid bash: it loads and registers a completion for tcplab.
    r = subprocess.run(
        ["bash", "-c", script + "\ncomplete -p tcplab"], capture_output=True, text=True
    )
    assert r.returncode == 0 and "tcplab" in r.stdout, r.stderr[-500:]
