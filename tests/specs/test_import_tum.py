"""tcplab import-tum: TUM framework configs (conjee/tcp-bbr-measurement-framework,
run_mininet.py) to specs, with the runner's semantics checked by hand-computed values."""

import pytest
import tcplab
from tcplab.cli.app import main
from tcplab.errors import SpecError
from tcplab.specs.import_tum import import_tum
from tcplab.specs.load import parse_spec, tomllib


def write(tmp_path, text, name="exp.conf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_starts_are_relative_to_the_previous_command_and_units_are_tcs(tmp_path):
    # figure_08.conf of the framework plus changes: the runner sleeps <start> before each
    # command, so absolute times are 0, 0 + 5, 5 + 10 (link) and 15 + 5 (link);
    # a host runs <stop> seconds from its own start (timeout <stop> nc).
    p = write(
        tmp_path,
        "host, cubic, 50ms, 0.0, 120.0\n# a comment\n\nhost, bbr, 50ms, 5, 60\n"
        "link, bw, 1mbps, 10\nlink, rtt, 20ms, 5\n",
    )
    spec = import_tum(str(p), bandwidth="10Mbit", latency="100ms", bucket="1600b")
    f = spec["flows"]
    assert [(g["start"], g["stop"]) for g in f] == [("0s", "120s"), ("5s", "65s")]
    assert spec["experiment"]["duration"] == "120s"
    # tc's "mbps" is megaBYTES per second: 8 Mbit/s.
    assert spec["events"] == [{"at": "15s", "rate": "8Mbps"}, {"at": "20s", "delay": "20ms"}]
    # tbf limit = rate x latency + burst = 10e6 x 0.1 / 8 + 1600 = 126 600 bytes.
    assert spec["bottleneck"]["buffer"] == "126600B"
    parse_spec(spec)


def test_initial_rtt_adds_to_every_flow_or_becomes_an_event(tmp_path):
    p = write(tmp_path, "host, bbr, 40ms, 0, 10\n")
    assert import_tum(str(p), rtt="10ms")["flows"][0]["rtt"] == "50ms"
    p = write(tmp_path, "host, bbr, 40ms, 0, 10\nlink, rtt, 30ms, 4\n")
    spec = import_tum(str(p), rtt="10ms")
    assert spec["flows"][0]["rtt"] == "40ms"
    assert spec["events"] == [{"at": "0s", "delay": "10ms"}, {"at": "4s", "delay": "30ms"}]
    assert spec["bottleneck"]["bdp_rtt"] == "50ms"


def test_malformed_lines_are_named(tmp_path):
    p = write(
        tmp_path, "host, bbr, 40, 0, 10\nlink, loss, 1%, 3\nswitch, x\nhost, bbr, 10ms, -1, 3\n"
    )
    with pytest.raises(SpecError) as e:
        import_tum(str(p))
    got = dict(e.value.problems)
    assert "allowed units: s, ms, us" in got["line 1: rtt"]
    assert "link, bw|rtt" in got["line 2"]
    assert "unknown command 'switch'" in got["line 3"]
    assert ">= 0" in got["line 4: start"]


def test_cli_prints_a_spec_and_refuses_bad_input(tmp_path, capsys):
    p = write(tmp_path, "host, bbr, 20ms, 0, 2\nhost, cubic, 20ms, 0.5, 1.5\n")
    assert main(["import-tum", str(p)]) == 0
    text = capsys.readouterr().out
    spec = parse_spec(tomllib.loads(text))
    assert [g.cc for g in spec.flows] == ["bbr", "cubic"]
    bad = write(tmp_path, "host, bbbr, 20ms, 0, 2\n", "bad.conf")
    assert main(["import-tum", str(bad)]) == 2
    assert "flows[0].cc" in capsys.readouterr().err


@pytest.mark.engine
def test_an_imported_config_runs(tmp_path, capsys):
    p = write(tmp_path, "host, bbr, 20ms, 0, 3\nhost, cubic, 20ms, 0.5, 2.5\nlink, bw, 5mbit, 1\n")
    assert main(["import-tum", str(p), "--loss", "0.5%"]) == 0
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(capsys.readouterr().out)
    r = tcplab.run(spec_file, tmp_path / "run", report=False)
    assert len(r.summary) == 2 and (r.summary["goodput_bps"] > 0).all()
    # The second flow runs from 0.5 s to 3.0 s (its stop is 2.5 s after its start).
    assert r.run.flows["stop_s"].tolist() == [3.0, 3.0]


def test_a_config_that_is_a_device_is_refused_without_reading_it(tmp_path, capsys):
    # Before, a config linked to /dev/zero was read without a bound and took all 23 GB
    # of the machine in under 30 s; a FIFO blocked forever.
    (tmp_path / "zero.conf").symlink_to("/dev/zero")
    import os

    os.mkfifo(tmp_path / "fifo.conf")
    for name in ("zero.conf", "fifo.conf"):
        assert main(["import-tum", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert name in err and "not a regular file" in err, err
