"""Every writer owns only what it wrote: it replaces a file only when the directory's
manifest lists it with the sha256 it still has, and refuses anything else naming it, with
the user's files left byte for byte (storage/ownership.py). One test per writer that lost
a user's files before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    spec = d / "s.toml"
    spec.write_text(SPEC)
    a, b = d / "a", d / "b"
    assert main(["run", str(spec), "-o", str(a), "-q", "--no-report"]) == 0
    assert (
        main(
            ["run", str(spec), "-o", str(b), "-q", "--no-report", "--set", "bottleneck.buffer=2bdp"]
        )
        == 0
    )
    return spec, a, b


def _users_files(d: Path) -> dict[str, bytes]:
    d.mkdir(parents=True, exist_ok=True)
    files = {"notes.txt": b"my notes\n", "analysis.py": b"print(1)\n"}
    for name, data in files.items():
        (d / name).write_bytes(data)
    return files


def _intact(d: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        assert (d / name).read_bytes() == data, name


def test_compare_writes_beside_the_users_files_and_keeps_them(two_runs, tmp_path):
    _, a, b = two_runs
    out = tmp_path / "cmp"
    mine = _users_files(out)
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    _intact(out, mine)  # they were all deleted with the directory before
    assert (out / "compare.csv").is_file() and (out / "outputs.json").is_file()
    # a second comparison replaces its own files and still leaves the user's
    assert main(["compare", str(b), str(a), "-o", str(out)]) == 0
    _intact(out, mine)


def test_compare_refuses_a_compare_csv_it_did_not_write(two_runs, tmp_path, capsys):
    _, a, b = two_runs
    out = tmp_path / "cmp"
    mine = _users_files(out)
    (out / "compare.csv").write_text("my,table\n")
    mine["compare.csv"] = b"my,table\n"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "-o" in err and "compare.csv" in err and "did not write" in err
    _intact(out, mine)
    assert not (out / "outputs.json").exists()


def test_compare_refuses_its_own_file_edited_since(two_runs, tmp_path, capsys):
    _, a, b = two_runs
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    (out / "compare.md").write_text("my edits\n")
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 2
    assert "compare.md" in capsys.readouterr().err
    assert (out / "compare.md").read_text() == "my edits\n"


def test_run_on_both_backends_refuses_a_users_compare_dir_before_running(
    two_runs, tmp_path, capsys
):
    spec, _, _ = two_runs
    out = tmp_path / "both"
    mine = _users_files(out / "compare")
    (out / "compare" / "compare.csv").write_text("mine\n")
    mine["compare.csv"] = b"mine\n"
    assert main(["run", str(spec), "-o", str(out), "--backend", "sim,kernel", "-q"]) == 2
    assert "compare.csv" in capsys.readouterr().err
    _intact(out / "compare", mine)
    assert not (out / "sim").exists()  # refused before either backend ran


def test_report_refuses_a_report_the_manifest_does_not_list(two_runs, tmp_path, capsys):
    import shutil

    _, a, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(a, run)
    before = (run / "manifest.json").read_bytes()
    (run / "report.html").write_text("<p>my own analysis</p>")
    assert main(["report", str(run)]) == 2
    assert "report.html" in capsys.readouterr().err
    assert (run / "report.html").read_text() == "<p>my own analysis</p>"
    assert (run / "manifest.json").read_bytes() == before
    assert not (run / "report.png").exists()  # nothing moved in


def test_report_on_an_unwritable_directory_is_a_clear_error(
    two_runs, tmp_path, capsys, monkeypatch
):
    import shutil
    import tempfile

    _, a, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(a, run)

    def read_only(*args, **kwargs):  # root writes anywhere: stand in for a read-only mount
        raise OSError(30, "Read-only file system", str(run))

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "not writable" in err and "Traceback" not in err and "internal error" not in err


def test_run_refuses_to_replace_a_run_whose_spec_was_edited(two_runs, tmp_path, capsys):
    import shutil

    spec, a, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(a, run)
    (run / "spec.toml").write_text((run / "spec.toml").read_text() + "# my note\n")
    edited = (run / "spec.toml").read_bytes()
    assert main(["run", str(spec), "-o", str(run), "-q", "--no-report"]) == 2
    assert "spec.toml" in capsys.readouterr().err
    assert (run / "spec.toml").read_bytes() == edited


def test_a_manifest_listing_the_users_files_with_made_up_digests_is_not_ours(
    two_runs, tmp_path, capsys
):
    spec, _, _ = two_runs
    out = tmp_path / "mine"
    mine = _users_files(out)
    (out / "manifest.json").write_text(
        json.dumps({"tcplab_version": "0.5.1", "sha256": {n: "x" for n in mine}})
    )
    mine["manifest.json"] = (out / "manifest.json").read_bytes()
    assert main(["run", str(spec), "-o", str(out), "-q", "--no-report"]) == 2
    assert "not a tcplab run directory" in capsys.readouterr().err
    _intact(out, mine)


@pytest.mark.parametrize("marker", [".lock", "sweep.json"])
def test_sweep_refuses_a_directory_whose_lock_or_plan_is_not_ours(tmp_path, capsys, marker):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC + '[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp"]\n')
    out = tmp_path / "sw"
    mine = _users_files(out)
    (out / marker).write_text("mine: do not truncate\n")
    mine[marker] = b"mine: do not truncate\n"
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 2
    assert "not a tcplab sweep directory" in capsys.readouterr().err
    _intact(out, mine)
    assert not (out / "runs").exists()


def test_sweep_keeps_the_users_files_and_refuses_one_in_its_way(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC + '[sweep]\n"bottleneck.buffer" = ["1bdp", "2bdp"]\n')
    out = tmp_path / "sw"
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 0
    mine = _users_files(out)
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 0
    _intact(out, mine)
    (out / "table.csv").write_text("my edited table\n")
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "-q"]) == 2
    assert "table.csv" in capsys.readouterr().err
    assert (out / "table.csv").read_text() == "my edited table\n"


def test_reproduce_refuses_a_report_md_it_did_not_write_before_any_run(tmp_path, capsys):
    out = tmp_path / "cat"
    mine = _users_files(out)
    (out / "report.md").write_text("# my report\n")
    mine["report.md"] = b"# my report\n"
    assert main(["reproduce", "tum-fig04", "-o", str(out), "--quick"]) == 2
    assert "report.md" in capsys.readouterr().err
    _intact(out, mine)
    assert not (out / "tum").exists()


def test_run_into_the_current_run_directory_is_refused_before_running(
    two_runs, tmp_path, capsys, monkeypatch
):
    import shutil

    spec, a, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(a, run)
    before = sorted(p.name for p in run.iterdir())
    monkeypatch.chdir(run)
    assert main(["run", str(spec), "-o", ".", "-q", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "current directory" in err and "Traceback" not in err
    assert sorted(p.name for p in run.iterdir()) == before  # no .tmp--old-* left inside


def test_run_refuses_to_replace_a_run_missing_a_listed_file(two_runs, tmp_path, capsys):
    import shutil

    spec, a, _ = two_runs
    run = tmp_path / "run"
    shutil.copytree(a, run)
    (run / "queue.csv").unlink()
    assert main(["run", str(spec), "-o", str(run), "-q", "--no-report"]) == 2
    assert "queue.csv" in capsys.readouterr().err
