"""tcplab compare: stored runs side by side, differences against the first."""

import json
import math

import pytest
from tcplab.cli.app import main
from tcplab.report.compare import compare_summaries


def _summary(share0, retx0, rtt0, util, cc1="cubic"):
    return {
        "duration_s": 10.0,
        "aggregate": {"utilization": util, "retransmitted_packets": retx0 + 10, "jain_index": None},
        "by_cc": {"bbr": {"share": share0}, cc1: {"share": 1 - share0}},
        "flows": [
            {
                "flow": 0,
                "cc": "bbr",
                "share": share0,
                "retransmitted_packets": retx0,
                "mean_rtt_ms": rtt0,
            },
            {
                "flow": 1,
                "cc": cc1,
                "share": 1 - share0,
                "retransmitted_packets": 10,
                "mean_rtt_ms": 50.0,
            },
        ],
    }


def _row(cmp, scope, metric):
    t = cmp.table
    rows = t[(t.scope == scope) & (t.metric == metric)]
    assert len(rows) == 1, (scope, metric)
    return rows.iloc[0]


def test_differences_and_ratios_against_the_first_run():
    cmp = compare_summaries(
        [_summary(0.75, 100, 40.0, 0.95), _summary(0.60, 25, 44.0, 0.95)], ["sim", "kernel"]
    )
    share = _row(cmp, "flow0 (bbr)", "share")
    assert share["sim"] == 0.75 and share["kernel"] == 0.60
    assert share["kernel - sim"] == pytest.approx(-0.15)
    assert share["kernel / sim"] == pytest.approx(0.8)
    retx = _row(cmp, "flow0 (bbr)", "retransmitted_packets")
    assert retx["kernel - sim"] == -75 and retx["kernel / sim"] == pytest.approx(0.25)
    assert _row(cmp, "flow0 (bbr)", "mean_rtt_ms")["kernel - sim"] == pytest.approx(4.0)
    assert _row(cmp, "cc:cubic", "share")["kernel - sim"] == pytest.approx(0.15)
    assert _row(cmp, "aggregate", "retransmitted_packets")["kernel"] == 35
    # A metric that is null in summary.json (jain_index here) stays empty, never 0.
    assert math.isnan(_row(cmp, "aggregate", "jain_index")["kernel - sim"])
    assert cmp.notes == []


def test_a_ratio_against_zero_is_empty_and_different_algorithms_are_noted():
    a, b = _summary(0.5, 0, 40.0, 0.9), _summary(0.5, 7, 40.0, 0.9, cc1="reno")
    cmp = compare_summaries([a, b], ["a", "b"])
    retx = _row(cmp, "flow0 (bbr)", "retransmitted_packets")
    assert retx["b - a"] == 7 and math.isnan(retx["b / a"])
    assert any("flow 1 runs different algorithms: a cubic, b reno" in n for n in cmp.notes)


def test_compare_cli_on_two_stored_runs(tmp_path, write_spec, capsys):
    spec = write_spec("""
[experiment]
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
cc = "bbr"
rtt = "20ms"
[[flows]]
cc = "cubic"
rtt = "20ms"
""")
    a, b = tmp_path / "one", tmp_path / "two"
    assert main(["run", str(spec), "-o", str(a), "-q", "--no-report"]) == 0
    assert (
        main(
            ["run", str(spec), "-o", str(b), "-q", "--no-report", "--set", "bottleneck.buffer=4bdp"]
        )
        == 0
    )
    capsys.readouterr()
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "-o", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    backlog = next(
        r for r in rows if r["scope"] == "aggregate" and r["metric"] == "mean_backlog_pkts"
    )
    assert backlog["two - one"] == pytest.approx(
        sb["aggregate"]["mean_backlog_pkts"] - sa["aggregate"]["mean_backlog_pkts"]
    )
    assert backlog["two - one"] > 0  # a 4 BDP buffer holds a longer queue than a 1 BDP one
    for name in ("compare.csv", "compare.md", "compare.png"):
        assert (out / name).is_file()


def test_compare_refuses_a_directory_that_is_not_a_run(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert (
        main(["compare", str(tmp_path / "x"), str(tmp_path / "x"), "-o", str(tmp_path / "cmp")])
        == 2
    )
    assert "not a tcplab run directory" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()
