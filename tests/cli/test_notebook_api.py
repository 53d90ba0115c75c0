"""The Python API as a notebook uses it: ``flow`` a column of the per-flow
tables, ``tcplab.load_sweep`` with numeric swept values, short reprs."""

import json

import pytest
import tcplab
from handmade import handmade_run, write_handmade_sweep
from tcplab.errors import SpecError
from tcplab.runs.sweep_data import numeric_axis
from tcplab.storage.directory import write_run


def test_flow_is_a_column_of_the_summary_and_still_its_index(tmp_path):
    r = handmade_run()
    assert list(r.summary.columns[:2]) == ["flow", "group"]
    assert r.summary["flow"].tolist() == [0, 1, 2]
    assert r.summary.loc[2, "cc"] == "cubic"  # .loc by flow id, as before
    # groupby and merge on "flow" are unambiguous (the index is unnamed)
    assert r.summary.groupby("flow").size().tolist() == [1, 1, 1]
    merged = r.series.merge(r.summary[["flow", "group"]], on="flow")
    assert len(merged) == len(r.series)
    write_run(r, tmp_path / "run", {}, 0.0)
    loaded = tcplab.load(tmp_path / "run")
    assert loaded.summary["flow"].tolist() == [0, 1, 2]
    assert loaded.summary.loc[1, "cc"] == "bbr"


def test_reprs_are_one_short_line(tmp_path):
    r = handmade_run()
    text = repr(r)
    assert text == (
        "<Result 'handmade': 3 flows (bbr, cubic), 10 s, seed 1, utilization 0.828, not stored>"
    )
    assert repr(r.run) == "<RunData 'handmade': 3 flows, series 300 rows, queue 100 rows>"
    assert repr(r.spec) == (
        "<Spec 'handmade': bottleneck 20Mbps 5ms 50pkt, flows 2 x bbr, 1 x cubic, 10s, seed 1>"
    )


@pytest.mark.parametrize(
    "values, numbers, unit",
    [
        (["10Mbps", "1gbit", "500kbit"], [10.0, 1000.0, 0.5], "Mbit/s"),
        (["40ms", "1s", "250us"], [40.0, 1000.0, 0.25], "ms"),
        (["0.5bdp", "2bdp"], [0.5, 2.0], "bdp"),
        (["100pkt", "50pkt"], [100.0, 50.0], "packets"),
        (["150000B", "1KiB"], [150000.0, 1024.0], "bytes"),
        ([1, 2.5], [1, 2.5], ""),
        (["1bdp", "100pkt"], ["1bdp", "100pkt"], None),  # not one kind: kept as written
        (["bbr", "cubic"], ["bbr", "cubic"], None),
        ([[1, 2], [3]], ["[1, 2]", "[3]"], None),
    ],
)
def test_swept_values_become_numbers_of_one_unit(values, numbers, unit):
    assert numeric_axis(values) == (numbers, unit)


def _flows(share0):
    return [
        {"flow": 0, "cc": "bbr", "share": share0, "goodput_bps": share0 * 20e6},
        {"flow": 1, "cc": "cubic", "share": 1 - share0, "goodput_bps": (1 - share0) * 20e6},
    ]


def test_load_sweep_gives_run_by_flow_rows_numeric_axes_and_series(tmp_path):
    axes = {"bottleneck.buffer": ["0.5bdp", "2bdp"], "flows[1].cc": ["cubic", "reno"]}
    runs = []
    for i, buf in enumerate(axes["bottleneck.buffer"]):
        for j, cc in enumerate(axes["flows[1].cc"]):
            point = {"bottleneck.buffer": buf, "flows[1].cc": cc}
            runs.append((point, 1, {"utilization": 0.9 - 0.1 * i - 0.01 * j}, _flows(0.5 + i / 4)))
    write_handmade_sweep(tmp_path / "sw", axes, runs)
    # a planned run that has not finished
    plan = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    plan["runs"].append({"point": runs[0][0], "repeat": 1, "seed": 2, "digest": "unfinished"})
    (tmp_path / "sw" / "sweep.json").write_text(json.dumps(plan))

    sw = tcplab.load_sweep(tmp_path / "sw")
    assert sw.missing == 1
    assert sw.units == {"bottleneck.buffer": "bdp", "flows[1].cc": None}
    t = sw.table
    assert len(t) == 8  # 4 runs x 2 flows
    assert t["bottleneck.buffer"].dtype.kind == "f"
    assert set(t["bottleneck.buffer"]) == {0.5, 2.0} and set(t["seed"]) == {1}
    # one row per run and flow: BBR's share at 2 BDP is 0.5 + 1/4 in both runs
    bbr = t[(t.cc == "bbr") & (t["bottleneck.buffer"] == 2.0)]
    assert bbr["share"].tolist() == [0.75, 0.75]
    means = t.groupby(["bottleneck.buffer", "cc"])["share"].mean()
    assert means[(0.5, "cubic")] == pytest.approx(0.5)
    assert sw.runs["utilization"].tolist() == pytest.approx([0.9, 0.89, 0.8, 0.79])
    s = sw.series
    assert list(s.columns[:4]) == ["bottleneck.buffer", "flows[1].cc", "repeat", "seed"]
    assert len(s) == 4 * 2 * 2  # runs x flows x samples
    assert repr(sw) == (
        f"<SweepData {tmp_path / 'sw'}: 4 runs (1 missing) over bottleneck.buffer [bdp], "
        "flows[1].cc; table 8 rows (run x flow)>"
    )


def test_load_sweep_refuses_a_directory_that_is_not_a_sweep(tmp_path):
    with pytest.raises(SpecError, match="not a tcplab sweep directory"):
        tcplab.load_sweep(tmp_path)
