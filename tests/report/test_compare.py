"""tcplab compare: stored runs side by side, differences against the first."""

import json
import math
import shutil

import pytest
from handmade import handmade_run, write_handmade_sweep
from tcplab.cli.app import main
from tcplab.report.compare import compare_runs, compare_summaries
from tcplab.storage.directory import write_run


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
    # rates in Mbit/s: the metric is renamed and its values divided by 1e6
    assert set(cmp.table.metric) >= {"goodput_mbps", "total_goodput_mbps"}
    assert not any(m.endswith("_bps") for m in cmp.table.metric)
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
    doc = json.loads(capsys.readouterr().out)
    # The spec difference comes first, as in the text output: the buffer resolved to
    # packets, 1 and 4 BDP of 10 Mbit/s x 20 ms = 25 000 B = 16.7 and 66.7 packets of 1500 B.
    assert doc["spec_diff"] == [{"path": "bottleneck.buffer", "values": ["17pkt", "67pkt"]}]
    rows = doc["metrics"]
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
    _overlay_colours_flows_by_algorithm(a, b, tmp_path)


def _overlay_colours_flows_by_algorithm(a, b, tmp_path):
    # compare.png coloured flows by index and named no algorithm; now each flow has its
    # algorithm's colour as in the run report (BBR tab10 blue, CUBIC tab10 orange: the
    # first and second algorithm of the run) and the legend names it.
    import matplotlib
    from tcplab.report import compare, plots

    figures = []

    def keep(**kwargs):
        figures.append(plots.Figure(**kwargs))
        return figures[-1]

    original = plots.new_figure
    plots.new_figure = keep
    try:
        compare.draw_overlay([a, b], ["one", "two"], tmp_path / "overlay.png")
    finally:
        plots.new_figure = original
    throughput = figures[0].axes[0]
    tab10 = matplotlib.colormaps["tab10"]
    drawn = {ln.get_label(): ln.get_color() for ln in throughput.get_lines()}
    assert drawn == {
        "one: flow 0 (bbr)": tab10(0),
        "one: flow 1 (cubic)": tab10(1),
        "two: flow 0 (bbr)": tab10(0),
        "two: flow 1 (cubic)": tab10(1),
    }


def test_compare_refuses_a_directory_that_is_not_a_run(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert (
        main(["compare", str(tmp_path / "x"), str(tmp_path / "x"), "-o", str(tmp_path / "cmp")])
        == 2
    )
    assert "not a tcplab run or sweep directory" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


def _stored_pair(tmp_path):
    """Two stored hand-made runs; the second's buffer is 100 packets instead of 50 and its
    total goodput 18.2 Mbit/s instead of 16.56."""
    a, b = tmp_path / "a", tmp_path / "b"
    write_run(handmade_run(), a, {}, 0.0)
    shutil.copytree(a, b)
    spec = (b / "spec.toml").read_text()
    assert 'buffer = "50pkt"' in spec
    (b / "spec.toml").write_text(spec.replace('buffer = "50pkt"', 'buffer = "100pkt"'))
    summary = json.loads((b / "summary.json").read_text())
    assert summary["aggregate"]["total_goodput_bps"] == 16_560_000
    summary["aggregate"]["total_goodput_bps"] = 18_200_000
    (b / "summary.json").write_text(json.dumps(summary))
    return a, b


def test_the_spec_difference_comes_first_field_by_field(tmp_path, capsys):
    a, b = _stored_pair(tmp_path)
    cmp = compare_runs([a, b])
    assert cmp.spec_diff == [("bottleneck.buffer", ["50pkt", "100pkt"])]
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "The specs differ in:"
    assert lines[1].split() == ["spec", "field", "a", "b"]
    assert next(x for x in lines if "bottleneck.buffer" in x).split() == [
        "bottleneck.buffer",
        "50pkt",
        "100pkt",
    ]
    # rates printed in Mbit/s: 16.56 and 18.2, difference 1.64, ratio 18.2 / 16.56
    row = next(x for x in lines if x.split()[:2] == ["aggregate", "total_goodput_mbps"])
    assert row.split()[2:] == ["16.56", "18.2", "1.64", "1.099"]
    assert "e+07" not in out and "total_goodput_bps" not in out


def test_equal_specs_print_no_difference(tmp_path, capsys):
    a = tmp_path / "a"
    write_run(handmade_run(), a, {}, 0.0)
    shutil.copytree(a, tmp_path / "b")
    assert compare_runs([a, tmp_path / "b"]).spec_diff == []
    assert main(["compare", str(a), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "specs differ" not in out and out.splitlines()[0].split()[:2] == ["scope", "metric"]


def _flows(share0):
    return [
        {"flow": 0, "cc": "bbr", "share": share0, "goodput_bps": share0 * 20e6},
        {"flow": 1, "cc": "cubic", "share": 1 - share0, "goodput_bps": (1 - share0) * 20e6},
    ]


def test_sweeps_are_compared_point_by_point(tmp_path, capsys):
    axes = {"bottleneck.buffer": ["1bdp", "4bdp"]}
    one, four = {"bottleneck.buffer": "1bdp"}, {"bottleneck.buffer": "4bdp"}
    write_handmade_sweep(
        tmp_path / "old",
        axes,
        [
            (one, 1, {"utilization": 0.9, "total_goodput_bps": 18e6}, _flows(0.7)),
            (four, 1, {"utilization": 0.8, "total_goodput_bps": 16e6}, _flows(0.4)),
        ],
    )
    # the new sweep lists its runs in another order, ran with 2 s instead of 10 s, and
    # lacks the 4 BDP point
    new = dict(axes)
    write_handmade_sweep(
        tmp_path / "new",
        new,
        [(one, 1, {"utilization": 0.95, "total_goodput_bps": 19e6}, _flows(0.6))],
        digest_tag="n",
    )
    spec = (tmp_path / "new" / "runs" / "0000n" / "spec.toml").read_text()
    assert 'duration = "10s"' in spec
    (tmp_path / "new" / "runs" / "0000n" / "spec.toml").write_text(
        spec.replace('duration = "10s"', 'duration = "2s"')
    )
    cmp = compare_runs([tmp_path / "old", tmp_path / "new"])
    # the swept path itself is not a difference; the duration is
    assert cmp.spec_diff == [("experiment.duration", ["10s", "2s"])]
    assert cmp.notes == ["point [bottleneck.buffer = 4bdp, seed 1] is missing in new"]
    t = cmp.table
    assert set(t["bottleneck.buffer"]) == {"1bdp"} and set(t["seed"]) == {1}
    util = t[t.metric == "utilization"].iloc[0]
    assert util["old"] == 0.9 and util["new - old"] == pytest.approx(0.05)
    gp = t[t.metric == "total_goodput_mbps"].iloc[0]
    assert (gp["old"], gp["new"], gp["new / old"]) == pytest.approx((18.0, 19.0, 19 / 18))
    bbr = t[t.metric == "share[bbr]"].iloc[0]
    assert bbr["new - old"] == pytest.approx(-0.1)
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert "note: point [bottleneck.buffer = 4bdp, seed 1] is missing in new" in out
    compare_runs([tmp_path / "old", tmp_path / "new"], tmp_path / "cmp")
    # no compare.png for sweeps; outputs.json lists what tcplab wrote there
    assert sorted(p.name for p in (tmp_path / "cmp").iterdir()) == [
        "compare.csv",
        "compare.md",
        "outputs.json",
    ]
    md = (tmp_path / "cmp" / "compare.md").read_text()
    row = next(x for x in md.splitlines() if "experiment.duration" in x)
    assert [c.strip() for c in row.strip("|").split("|")] == ["experiment.duration", "10s", "2s"]


def test_runs_and_sweeps_are_not_mixed(tmp_path, capsys):
    write_run(handmade_run(), tmp_path / "run", {}, 0.0)
    write_handmade_sweep(tmp_path / "sw", {"bottleneck.buffer": ["1bdp"]}, [])
    assert main(["compare", str(tmp_path / "run"), str(tmp_path / "sw")]) == 2
    assert "compare runs with runs and sweeps with sweeps" in capsys.readouterr().err


def test_a_missing_directory_is_named_before_kinds_are_compared(tmp_path, capsys):
    write_handmade_sweep(tmp_path / "sw", {"bottleneck.buffer": ["1bdp"]}, [])
    assert main(["compare", str(tmp_path / "sw"), str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nothing'}: not a tcplab run or sweep directory" in err
