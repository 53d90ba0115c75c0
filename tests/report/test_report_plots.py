"""What the run report and the sweep plots show, on hand-made data with hand-computed
expectations: per-algorithm totals, RTT-smoothed goodput whose readings above
the link rate are all marked, decimation, CDFs, legends for many flows, confidence
intervals over seeds and numeric sweep axes. No engine needed."""

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from handmade import handmade_run
from tcplab.report import plots as p
from tcplab.report import series as sr
from tcplab.report import sweep_plots as sp
from tcplab.report.run_report import _legend


def test_per_algorithm_totals_sum_that_algorithms_flows():
    wide = pd.DataFrame(
        {0: [1.0, 3.0], 1: [2.0, 4.0], 2: [np.nan, 5.0]}, index=pd.Index([0.1, 0.2])
    )
    totals = sr.per_algorithm_total(wide, {0: "bbr", 1: "bbr", 2: "cubic"})
    assert list(totals.columns) == ["bbr", "cubic"]
    assert totals["bbr"].tolist() == [3.0, 7.0]
    assert totals["cubic"].tolist() == [0.0, 5.0]  # not running counts 0


def test_per_algorithm_totals_on_the_handmade_run():
    run = handmade_run().run
    thr = run.wide("throughput_bps")
    totals = sr.per_algorithm_total(thr, sr.algorithm_of(run))
    # At t = 5 s all three flows run: flows 0 and 1 are BBR, flow 2 CUBIC; each
    # 20e6 / 3 * (1 + 0.1 sin(5 + fid)) by construction (tests/handmade.py).
    expect = [20e6 / 3 * (1 + 0.1 * math.sin(5.0 + fid)) for fid in range(3)]
    assert totals.loc[5.0, "bbr"] == pytest.approx(expect[0] + expect[1])
    assert totals.loc[5.0, "cubic"] == pytest.approx(expect[2])
    # Before CUBIC starts (2 s) its total is 0, BBR's two flows share 20 Mbit/s.
    assert totals.loc[1.0, "cubic"] == 0.0


def test_wide_is_computed_once_and_each_caller_gets_its_own_copy():
    # RunData.wide caches the pivot per column (the summary, report.png and
    # report.html asked for the same columns about 25 times).
    run = handmade_run().run
    first = run.wide("cwnd_pkts")
    # Flow 2 (CUBIC) starts at 2 s: no value at 1 s; flow 0 at 1 s is 20 + 5 sin(3).
    assert np.isnan(first.loc[1.0, 2])
    assert first.loc[1.0, 0] == pytest.approx(20 + 5 * math.sin(3.0))
    first.loc[:, :] = -1.0  # a caller changing its copy changes nobody else's
    assert run.wide("cwnd_pkts").loc[1.0, 0] == pytest.approx(20 + 5 * math.sin(3.0))
    # A new series (assigned, not changed in place) is pivoted anew.
    run.series = run.series.assign(cwnd_pkts=run.series["cwnd_pkts"] * 2)
    assert run.wide("cwnd_pkts").loc[1.0, 0] == pytest.approx(40 + 10 * math.sin(3.0))


def test_wide_keeps_the_first_sample_and_blanks_idle_flows():
    run = handmade_run().run  # flows 0 and 1 run from 0 s, flow 2 (CUBIC) from 2 s
    run.series = pd.DataFrame(
        {
            "time_s": [0.1, 0.1, 0.2, 0.1, 0.2],
            "flow": [0, 1, 0, 0, 1],
            "cwnd_pkts": [1.0, 2.0, 3.0, 99.0, 4.0],  # the second (0.1, flow 0) is dropped
            "retransmits": [1, 0, 2, 5, 3],
        }
    )
    cwnd = run.wide("cwnd_pkts")
    assert cwnd.index.tolist() == [0.1, 0.2] and cwnd.columns.tolist() == [0, 1]
    assert cwnd.to_numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    retx = run.wide("retransmits")
    assert retx.dtypes.tolist() == ["int64", "int64"]  # a full grid of counts stays integer
    assert retx.to_numpy().tolist() == [[1, 0], [2, 3]]
    # Flow 2 has a sample at 0.1 s, before its start (2 s): blank, so the counts are floats.
    run.series = pd.concat(
        [
            run.series,
            pd.DataFrame({"time_s": [0.1], "flow": [2], "cwnd_pkts": [7.0], "retransmits": [1]}),
        ],
        ignore_index=True,
    )
    retx = run.wide("retransmits")
    assert retx.columns.tolist() == [0, 1, 2]
    assert np.isnan(retx.loc[0.1, 2]) and np.isnan(retx.loc[0.2, 2])
    assert retx.loc[0.2, 1] == 3.0


def test_wide_fast_pivot_equals_pandas_pivot_for_every_column():
    # The numeric pivot (RunData._grid) against pandas' pivot, which it replaced for speed.
    run = handmade_run().run
    for column in run.series.columns.drop(["time_s", "flow"]):
        pd.testing.assert_frame_equal(run.wide(column), run._pivot_pandas(column))


@pytest.mark.parametrize(
    "rtts, expected",
    [
        ([40.0, 77.0], 2),  # ceil(0.77) + 1
        ([100.0], 2),  # exactly one interval: the hold fits one sample, + 1
        ([250.0, np.nan], 4),  # ceil(2.5) + 1
    ],
)
def test_the_smoothing_window_is_one_rtt_plus_one_sample(rtts, expected):
    run = handmade_run().run  # 100 ms samples
    assert sr.smoothing_samples(run, pd.Series(rtts)) == expected


def _burst() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One flow on a 10 Mbit/s link: it receives 10 Mbit/s throughout; a loss holds all of
    sample 5's data back, released with sample 6's (20 Mbit/s in sample 6)."""
    t = pd.Index(np.round(np.arange(1, 11) * 0.1, 6))
    thr = pd.DataFrame({0: [10e6] * 10}, index=t)
    good = pd.DataFrame({0: [10e6] * 10}, index=t)
    good.iloc[4, 0] = 0.0
    good.iloc[5, 0] = 20e6
    return thr, good


def test_smoothed_burst_reads_the_link_rate_where_the_window_holds_the_hold():
    thr, good = _burst()
    smooth = sr.trailing_mean(good, 2)
    # (10 + 0) / 2, (0 + 20) / 2, (20 + 10) / 2, (10 + 10) / 2 Mbit/s
    assert (smooth[0].iloc[4:8] / 1e6).tolist() == [5.0, 10.0, 15.0, 10.0]
    above = sr.above_link_rate(smooth, 10e6)
    # The only reading above the link rate is the window holding the release without
    # the hold before it, and it is marked.
    assert above[0].tolist() == [False] * 6 + [True] + [False] * 3
    smooth_thr = sr.trailing_mean(thr, 2)
    assert (smooth[0][above[0]] > smooth_thr[0][above[0]]).all()


def test_the_goodput_panel_marks_every_reading_above_the_link_rate():
    import matplotlib.pyplot as plt

    result = handmade_run()
    run = result.run
    s = run.series
    flow0 = s["flow"] == 0
    # A release: nothing in the sample ending at 5.0 s, 60 Mbit/s in the next.
    s.loc[flow0 & np.isclose(s["time_s"], 5.0), "goodput_bps"] = 0.0
    s.loc[flow0 & np.isclose(s["time_s"], 5.1), "goodput_bps"] = 60e6
    fig, ax = plt.subplots()
    try:
        smooth = p.smoothed_goodput(ax, run, 2)
        rate = 20e6
        above = smooth.index[(smooth > rate).any(axis=1)].to_numpy()
        # (0 + 60) / 2 = 30 at 5.1 s; (60 + g(5.2)) / 2 > 20 at 5.2 s; nowhere else.
        assert above.tolist() == pytest.approx([5.1, 5.2])
        marks = [ln for ln in ax.lines if ln.get_marker() == "v"]
        assert len(marks) == 1
        assert marks[0].get_xdata().tolist() == pytest.approx([5.1, 5.2])
        assert marks[0].get_ydata()[0] == pytest.approx(30.0)
        assert "held data released in order" in marks[0].get_label()
        assert ax.get_ylabel() == "goodput, 200 ms mean [Mbit/s]"
    finally:
        plt.close(fig)


def test_decimate_keeps_spikes_and_gaps():
    x = np.arange(20.0)
    y = np.arange(20.0)
    y[3] = 100.0
    y[7] = np.nan
    xd, yd = sr.decimate(x, y, 4)  # buckets of 5 samples
    assert len(xd) <= 12
    # bucket 0..4: min 0 at x 0, max 100 at x 3, in that order
    assert xd[:2].tolist() == [0.0, 3.0] and yd[:2].tolist() == [0.0, 100.0]
    # bucket 5..9 holds the NaN: its extremes 5 and 9, then a gap
    assert xd[2:5].tolist() == [5.0, 9.0, 9.0]
    assert yd[2:4].tolist() == [5.0, 9.0] and math.isnan(yd[4])
    assert yd[-1] == 19.0
    xs, ys = sr.decimate(x[:8], y[:8], 4)  # short enough: unchanged
    assert len(xs) == 8


def test_ecdf():
    x, prob = sr.ecdf([3.0, 1.0, np.nan, 2.0])
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert prob.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])


def _many_flows(n_bbr: int, n_cubic: int, bbr_rtts: tuple[float, ...] = (40.0,)) -> Any:
    flows = pd.DataFrame(
        {
            "cc": ["bbr"] * n_bbr + ["cubic"] * n_cubic,
            "rtt_ms": [bbr_rtts[k % len(bbr_rtts)] for k in range(n_bbr)] + [40.0] * n_cubic,
        },
        index=pd.Index(range(n_bbr + n_cubic), name="flow"),
    )
    return SimpleNamespace(flows=flows)


def test_up_to_six_flows_are_told_apart_by_line_style():
    run = _many_flows(4, 2)
    styles = p.flow_styles(run)
    assert [styles[f]["ls"] for f in (0, 1, 2, 3)] == ["-", "--", ":", "-."]
    assert styles[4]["ls"] == "-"  # each algorithm's first flow is solid
    assert styles[0]["color"] != styles[4]["color"]
    handles, labels = _legend(_many_flows(2, 1))
    assert labels == ["flow 0 (bbr, 40 ms)", "flow 1 (bbr, 40 ms)", "flow 2 (cubic, 40 ms)"]


def test_many_flows_are_drawn_and_named_as_groups_of_algorithm_and_rtt():
    # Ten flows were five shades by five line styles no reader could match (issue 45):
    # beyond six flows a panel draws each (algorithm, RTT) group as one style, and the
    # legend names the groups with their flow counts.
    run = _many_flows(6, 4, bbr_rtts=(20.0, 60.0))  # bbr 20 ms: 0, 2, 4; 60 ms: 1, 3, 5
    styles = p.flow_styles(run)
    assert {styles[f]["ls"] for f in (0, 2, 4)} == {"-"}
    assert {styles[f]["ls"] for f in (1, 3, 5)} == {"--"}
    assert {styles[f]["ls"] for f in (6, 7, 8, 9)} == {"-"}
    assert len({str(styles[f]["color"]) for f in range(6)}) == 1
    assert styles[0]["color"] != styles[6]["color"]
    handles, labels = _legend(run)
    assert labels == ["bbr, 20 ms (3 flows)", "bbr, 60 ms (3 flows)", "cubic, 40 ms (4 flows)"]
    assert [h.get_linestyle() for h in handles] == ["-", "--", "-"]


def test_the_numbers_row_lists_every_flow_up_to_its_room_then_groups():
    from tcplab.report import run_report as rr

    result = handmade_run()
    blocks = rr._numbers_blocks(result)
    assert blocks[2][0].startswith("flow  cc")
    assert len(blocks[2]) == 1 + 3  # header and the three flows, none cut
    assert blocks[1][0] == "algorithm   flows  share (of bytes received)"


def test_confidence_interval_is_student_t():
    # n = 3: t(0.975, 2) = 4.303 (tables); s of 1, 2, 3 is 1 -> 4.303 / sqrt(3) = 2.484
    assert sp.ci_half_width([1.0, 2.0, 3.0]) == pytest.approx(2.484, abs=1e-3)
    # n = 2: t(0.975, 1) = 12.706; s of 0.2, 0.4 is 0.1414 -> 12.706 * 0.1414 / 1.414 = 1.2706
    assert sp.ci_half_width([0.2, 0.4]) == pytest.approx(1.2706, abs=1e-3)
    assert math.isnan(sp.ci_half_width([5.0]))


def test_swept_sizes_rates_and_times_get_numeric_axes_with_units():
    a = sp.axis_of("bottleneck.buffer", ["0.5bdp", "1bdp", "4bdp"])
    assert a.numbers == [0.5, 1.0, 4.0] and a.label == "buffer (BDP)"
    a = sp.axis_of("bottleneck.rate", ["10Mbps", "1Gbps"])
    assert a.numbers == [10.0, 1000.0] and a.label == "rate (Mbit/s)"
    a = sp.axis_of("flows[0].rtt", ["20ms", "0.1s"])
    assert a.numbers == [20.0, 100.0] and a.label == "flows[0].rtt (ms)"
    a = sp.axis_of("flows[1].count", [1, 2, 8])
    assert a.numbers == [1.0, 2.0, 8.0]
    assert sp.axis_of("flows[0].cc", ["bbr", "cubic"]).numbers is None
    assert sp.axis_of("bottleneck.buffer", ["100pkt", "1bdp"]).numbers is None  # mixed units


def test_a_doubling_grid_gets_a_log_axis_and_an_even_one_a_linear_axis():
    # 0.25 .. 4 BDP: every step doubles (log steps all ln 2, linear steps 0.25 .. 2)
    a = sp.axis_of("bottleneck.buffer", ["0.25bdp", "0.5bdp", "1bdp", "2bdp", "4bdp"])
    assert a.log and a.numbers == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert not sp.axis_of("flows[1].count", [1, 2, 3, 4]).log  # equal differences
    assert not sp.axis_of("bottleneck.rate", ["10Mbps", "1Gbps"]).log  # two points: no spacing
    assert not sp.axis_of("x", [0, 1, 2, 4]).log  # zero has no logarithm
    assert not sp.axis_of("flows[0].cc", ["bbr", "cubic"]).log


def test_metric_labels_name_the_unit_drawn_not_the_stored_one():
    assert sp.metric_label("total_goodput_bps") == "total_goodput (Mbit/s)"
    assert sp.metric_label("goodput_bps[flow0]") == "goodput[flow0] (Mbit/s)"
    assert sp.metric_label("mean_queueing_delay_ms") == "mean_queueing_delay (ms)"
    assert sp.metric_label("share[bbr]") == "share[bbr] (fraction)"
    assert sp.metric_label("jain_index") == "jain_index (index, 1 = fair)"


def _sweep_table() -> tuple[SimpleNamespace, pd.DataFrame]:
    plan = SimpleNamespace(
        axes={"bottleneck.buffer": ["1bdp", "0.5bdp"]}, repeat=2, metrics=["jain_index"]
    )
    table = pd.DataFrame(
        {
            "bottleneck.buffer": ["1bdp", "1bdp", "0.5bdp", "0.5bdp"],
            "share[bbr]": [0.6, 0.8, 0.9, 0.9],
            "share[cubic]": [0.4, 0.2, 0.1, 0.1],
            "jain_index": [0.2, 0.4, 0.7, 0.7],
        }
    )
    return plan, table


def test_sweep_panels_start_with_the_shares_and_order_numeric_points():
    plan, table = _sweep_table()
    assert sp.panels(plan, table) == [sp.SHARES, "jain_index"]
    axis = sp.axis_of("bottleneck.buffer", plan.axes["bottleneck.buffer"])
    lines = dict(sp.series_of(plan, table, axis, sp.SHARES))
    assert list(lines) == ["bbr", "cubic"]
    bbr = lines["bbr"]
    assert bbr["x"].tolist() == [0.5, 1.0]  # in increasing buffer, not the sweep's order
    assert bbr["mean"].tolist() == pytest.approx([0.9, 0.7])
    assert bbr["ci"].iloc[0] == pytest.approx(0.0)
    # 0.6, 0.8: s = 0.1414, t(0.975, 1) = 12.706 -> 1.2706
    assert bbr["ci"].iloc[1] == pytest.approx(1.2706, abs=1e-3)
    ((_, jain),) = sp.series_of(plan, table, axis, "jain_index")
    assert jain["n"].tolist() == [2, 2]


def test_sweep_summary_png_is_written(tmp_path):
    plan, table = _sweep_table()
    path = sp.plot_axis(tmp_path, plan, table, "bottleneck.buffer")
    assert path.name == "summary_bottleneck.buffer.png" and path.stat().st_size > 10_000


def test_run_html_is_self_contained_and_escapes_names(monkeypatch):
    import handmade
    from tcplab.report.html import plotly_js, run_html

    monkeypatch.setitem(handmade.SPEC["experiment"], "name", "</script><b>x</b>")
    html = run_html(handmade.handmade_run())
    assert "<b>x</b>" not in html
    assert "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in html
    # Only the page's own two scripts end: plotly.js, then the figures and the marker.
    assert html.count("</script>") == 2
    # Nothing fetched: plotly.js inline, and no source or link outside it.
    page = html.replace(plotly_js(), "")
    assert len(html) - len(page) > 1_000_000
    assert "src=" not in page and "<link" not in page
    for table in ("jain_index", "share of bytes received", "goodput_bps", "[bottleneck]"):
        assert table in html, table


@pytest.mark.parametrize(
    "name, expected",
    [
        ("goodput_bps[flow0]", (1e6, "Mbit/s")),
        ("cc_min_rtt_us", (1e3, "ms")),
        ("window.share[bbr]", (1.0, "fraction")),
        ("rwnd_limited_s[flow1]", (1.0, "s")),
        ("retransmitted_packets", (1.0, "packets")),
        ("jain_index", (1.0, "index, 1 = fair")),
        ("cc_mode", (1.0, "")),
    ],
)
def test_one_unit_table_for_series_columns_and_summary_metrics(name, expected):
    from tcplab.report.units import unit

    assert unit(name) == expected


def test_importing_and_drawing_leave_the_users_matplotlib_backend_alone(tmp_path):
    # A notebook's inline backend (or any backend the user chose) must survive
    # `import tcplab` and a report being drawn: the report modules used to call
    # matplotlib.use("Agg") at import.
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('svg')\n"
        "import tcplab, tcplab.report.run_report, tcplab.report.sweep_plots\n"
        "import tcplab.report.compare, tcplab.reproduce.report, tcplab.reproduce.timeseries_plot\n"
        "import matplotlib.pyplot as plt\n"
        "from tcplab.report.plots import new_figure\n"
        "fig = new_figure(figsize=(2, 2)); fig.subplots().plot([0, 1])\n"
        f"fig.savefig({str(tmp_path / 'f.png')!r})\n"
        "print(matplotlib.get_backend(), len(plt.get_fignums()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["svg", "0"]
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.engine
def test_cdfs_split_an_algorithm_by_rtt_where_its_flows_differ():
    # Before, per-algorithm CDFs pooled a 10 ms and a 50 ms BBR flow into one RTT
    # distribution. BBR at 10 and 50 ms get a line each; CUBIC (one RTT) stays one line.
    import tcplab
    from tcplab.report.series import cdf_groups

    spec = {
        "experiment": {"duration": "3s"},
        "bottleneck": {"rate": "20Mbps", "delay": "2ms", "buffer": "1bdp"},
        "flows": [
            {"cc": "bbr", "rtt": "10ms"},
            {"cc": "cubic", "rtt": "30ms"},
            {"cc": "bbr", "rtt": "50ms"},
        ],
    }
    res = tcplab.run(spec, report=False)
    groups = [(label, cc, fids) for label, cc, fids, _ in cdf_groups(res.run)]
    assert groups == [
        ("bbr, 10 ms", "bbr", [0]),
        ("bbr, 50 ms", "bbr", [2]),
        ("cubic", "cubic", [1]),
    ]
    fig = res.report()
    rtt_ax = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("RTT distribution"))
    labels = [t.get_text().split(" (n=")[0] for t in rtt_ax.get_legend().get_texts()]
    assert labels == ["bbr, 10 ms", "bbr, 50 ms", "cubic"]


@pytest.mark.engine
def test_thirty_flows_fit_the_numbers_row_as_groups(tmp_path):
    import tcplab
    from tcplab.report import run_report as rr

    spec = {
        "experiment": {"duration": "2s"},
        "bottleneck": {"rate": "50Mbps", "delay": "2ms", "buffer": "1bdp"},
        "flows": [
            {"cc": "bbr", "rtt": "20ms", "count": 20},
            {"cc": "cubic", "rtt": "40ms", "count": 10},
        ],
    }
    res = tcplab.run(spec, report=False)
    flows = rr._numbers_blocks(res)[2]
    assert flows[0] == "30 flows in 2 groups (every flow: summary.json, report.html)"
    assert [line.split()[:3] for line in flows[2:]] == [
        ["bbr,", "20", "ms"],
        ["cubic,", "40", "ms"],
    ]
    assert [int(line[18:24]) for line in flows[2:]] == [20, 10]


def test_the_backlog_panel_reads_queueing_delay_in_ms():
    # Before, a reader multiplied the backlog by the packet time (issue 45). The handmade
    # link (20 Mbit/s, 1500-byte wire packets) gives 0.6 ms per packet: 1500 * 8 / 20e6.
    fig = handmade_run().report()
    backlog = next(a for a in fig.axes if a.get_ylabel() == "backlog [packets]")
    assert "0.6 ms per packet" in backlog.get_title(loc="left")
    right = [c for c in backlog.child_axes if c.get_ylabel() == "queueing delay [ms]"]
    assert len(right) == 1
    assert right[0]._functions[0](100.0) == pytest.approx(60.0)


def test_the_throughput_delay_panel_has_a_point_per_flow_better_up_and_right():
    result = handmade_run()
    fig = result.report()
    ax = next(a for a in fig.axes if a.get_title(loc="left").startswith("throughput against"))
    assert ax.xaxis_inverted()  # lower delay to the right, as Pantheon draws it
    from matplotlib.collections import PathCollection  # the scatters, not the grid's lines

    points = np.vstack([c.get_offsets() for c in ax.collections if type(c) is PathCollection])
    flows = result.summary
    expected = np.column_stack([flows["p95_rtt_ms"], flows["goodput_bps"] / 1e6])
    assert sorted(map(tuple, points.round(6))) == sorted(map(tuple, expected.round(6)))


def test_the_sweeps_throughput_delay_points_are_means_over_seeds_with_intervals():
    # Two points, two seeds each: means by hand, Student-t half-width
    # t(0.975, 1) * s / sqrt(2) = 12.706 * |a - b| / 2.
    plan = SimpleNamespace(axes={"bottleneck.buffer": ["1bdp", "4bdp"]}, repeat=2)
    table = pd.DataFrame(
        {
            "bottleneck.buffer": ["1bdp", "1bdp", "4bdp", "4bdp"],
            "mean_queueing_delay_ms": [30.0, 32.0, 130.0, 140.0],
            "total_goodput_bps": [9.5e6, 9.7e6, 9.6e6, 9.6e6],
        }
    )
    pts = sp.throughput_delay_points(plan, table).set_index("point")
    one = pts.loc["bottleneck.buffer=1bdp"]
    assert one["delay"] == pytest.approx(31.0)
    assert one["goodput"] == pytest.approx(9.6e6)
    assert one["delay_ci"] == pytest.approx(12.706 * 2.0 / 2, rel=1e-3)
    four = pts.loc["bottleneck.buffer=4bdp"]
    assert four["delay"] == pytest.approx(135.0)
    assert four["goodput_ci"] == 0.0
    assert list(pts["n"]) == [2, 2]


def _rtt_cwnd_run(rtt: list[float], cwnd: list[float]) -> Any:
    t = pd.Index(np.round(np.arange(1, len(rtt) + 1) * 0.1, 6), name="time_s")
    frames = {
        "rtt_ms": pd.DataFrame({0: rtt}, index=t),
        "cwnd_pkts": pd.DataFrame({0: cwnd}, index=t),
    }
    return SimpleNamespace(wide=lambda col: frames[col])


def test_rtts_at_min_plus_40_ms_at_tiny_windows_are_named_as_delayed_acks():
    # Issue 45: an RTT that jumps to the path + 40 ms at a window of 1-2 segments is the
    # receiver's delayed-ACK timer. Min RTT 41 ms: 81 ms (within 8 ms of 81) at cwnd 2
    # counts; 81 ms at cwnd 10 does not (a queue), nor 60 ms at cwnd 1.
    rtt = [41, 81, 41, 79, 41, 85, 41, 81, 60, 41]
    cwnd = [2, 2, 2, 1, 2, 2, 2, 10, 1, 2]
    found = p.delayed_ack_intervals(_rtt_cwnd_run(rtt, cwnd))
    assert list(found) == [0]
    assert found[0].tolist() == [0.2, 0.4, 0.6]
    # Two such intervals are noise: nothing is marked.
    assert p.delayed_ack_intervals(_rtt_cwnd_run(rtt[:5], cwnd[:5])) == {}
