"""An entry's ``[catalogue.timeseries]``: load-time errors naming the field, a
hand-made entry run end to end into its time-series PNG and the reports' references to
it, and the paper's marks at the stated values on the drawn axes."""

from pathlib import Path

import pytest
from tcplab.errors import SpecError
from tcplab.reproduce import load_catalogue, reproduce

# One BBR flow alone, 10 Mbit/s, 40 ms, 3 s, two buffers and two seeds. The marks are
# arbitrary numbers (this is no paper): a level of 5 Mbit/s over 1-2 s, a level of
# 10 Mbit/s over the whole run, both on the throughput panel, and an event at 1.5 s.
ENTRY = """
[experiment]
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
[[flows]]
cc = "bbr"
rtt = "40ms"
[sweep]
"bottleneck.buffer" = ["1bdp", "2bdp"]
repeat = 2

[catalogue]
paper = "tum"
figure = "Fig. 99"
title = "a test entry"
x = "bottleneck.buffer"
plot = ["utilization"]

[catalogue.timeseries]
at = { "bottleneck.buffer" = "2bdp" }
columns = ["throughput_bps", "backlog_pkts"]
seed = 2
paper = [
  { column = "throughput_bps", t = [1.0, 2.0], y = 5e6, where = "Sec. 1", label = "span" },
  { column = "throughput_bps", y = 10e6, where = "Sec. 2", label = "whole run" },
  { t = 1.5, where = "Sec. 3", label = "event" },
]

[[catalogue.claims]]
quote = "holds"
where = "here"
metric = "utilization"
op = ">="
value = 0.1
"""

# The same run without an x axis: its only plot is the time series.
SERIES_ONLY = (
    ENTRY.replace('x = "bottleneck.buffer"\nplot = ["utilization"]\n', "")
    .replace('"bottleneck.buffer" = ["1bdp", "2bdp"]', "")
    .replace('at = { "bottleneck.buffer" = "2bdp" }\n', "")
)


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    root = tmp_path_factory.mktemp("cat") / "papers"
    (root / "tum").mkdir(parents=True)
    (root / "tum" / "tum-fig99-ts.toml").write_text(ENTRY)
    (root / "tum" / "tum-fig98-series-only.toml").write_text(SERIES_ONLY)
    out = root.parent / "out"
    results = reproduce(None, out, root=root, workers=1, say=lambda *_: None)
    return root, out, results


def test_the_report_shows_the_timeseries_below_the_summary_plot(reproduced):
    _, out, _ = reproduced
    png = out / "plots" / "tum-fig99-ts-timeseries.png"
    assert png.stat().st_size > 10_000
    md = (out / "report.md").read_text()
    summary = md.index("![Fig. 99](plots/tum-fig99-ts.png)")
    series = md.index("![Fig. 99, time series](plots/tum-fig99-ts-timeseries.png)")
    assert summary < series
    assert "paper's curve itself is not available (text-only source)" in md
    html = (out / "report.html").read_text()
    assert '<img src="plots/tum-fig99-ts-timeseries.png"' in html
    assert html.index('src="plots/tum-fig99-ts.png"') < html.index(
        'src="plots/tum-fig99-ts-timeseries.png"'
    )


def test_without_an_x_axis_the_timeseries_replaces_the_bare_series_plot(reproduced):
    _, out, _ = reproduced
    md = (out / "report.md").read_text()
    assert "plots/tum-fig98-series-only-timeseries.png" in md
    assert not (out / "plots" / "tum-fig98-series-only.png").exists()


def _figure(reproduced, name="tum-fig99-ts"):
    from tcplab.reproduce.timeseries_plot import chosen_run, draw, run_dir
    from tcplab.runs.result import load_run

    _, _, results = reproduced
    res = next(r for r in results if r.entry.name == name)
    run = chosen_run(res)
    data = load_run(run_dir(res, run)).run
    return draw(data, res.entry.meta.timeseries, res.entry.meta, run.seed), data, run


def _marks(ax):
    return {ln.get_label(): ln for ln in ax.get_lines() if ln.get_label().startswith("paper: ")}


def test_the_marks_are_drawn_at_the_stated_values(reproduced):
    """Levels in Mbit/s on the throughput panel (5e6 bit/s -> 5.0), the whole-run level
    over the drawn range 0-3 s, the event at 1.5 s in both panels; the level in no other."""
    fig, _, _ = _figure(reproduced)
    thr, backlog = fig.axes[:2]
    marks = _marks(thr)
    span = marks["paper: span (Sec. 1)"]
    assert list(span.get_xdata()) == [1.0, 2.0] and list(span.get_ydata()) == [5.0, 5.0]
    whole = marks["paper: whole run (Sec. 2)"]
    assert list(whole.get_xdata()) == [0.0, 3.0] and list(whole.get_ydata()) == [10.0, 10.0]
    for ax in (thr, backlog):
        event = _marks(ax)["paper: event (Sec. 3)"]
        assert list(event.get_xdata()) == [1.5, 1.5]
        assert event.get_linestyle() == "--"
    assert set(_marks(backlog)) == {"paper: event (Sec. 3)"}
    assert thr.get_ylabel() == "throughput_bps [Mbit/s]"


def test_the_drawn_run_is_the_chosen_point_and_seed(reproduced):
    """Seed 2 at 2 BDP: the title says so, and the throughput line's peak is the series'
    (decimation keeps every maximum)."""
    fig, data, run = _figure(reproduced)
    assert run.seed == 2 and run.point == {"bottleneck.buffer": "2bdp"}
    assert "at bottleneck.buffer = 2bdp, seed 2" in fig._suptitle.get_text()
    flow = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("paper")]
    peak = max(float(ln.get_ydata()[~(ln.get_ydata() != ln.get_ydata())].max()) for ln in flow)
    assert peak == pytest.approx(data.series["throughput_bps"].max() / 1e6)


@pytest.mark.parametrize(
    "edit, field",
    [
        (('"bottleneck.buffer" = "2bdp" }', '"bottleneck.buffer" = "7bdp" }'), "timeseries.at"),
        (('at = { "bottleneck.buffer"', 'at = { "bottleneck.rate"'), "timeseries.at"),
        (('at = { "bottleneck.buffer" = "2bdp" }', "at = {}"), "timeseries.at"),
        (('"backlog_pkts"]', '"backlog_packets"]'), "timeseries.columns[1]"),
        (("seed = 2", "seed = 5"), "timeseries.seed"),
        (("seed = 2", "seed = 2\ntime = [2.0, 1.0]"), "timeseries.time"),
        (('{ column = "throughput_bps", y = 10e6', "{ y = 10e6"), "timeseries.paper[1].column"),
        (('column = "throughput_bps", t', 'column = "cwnd_pkts", t'), "timeseries.paper[0].column"),
        (("t = [1.0, 2.0], y = 5e6,", "t = [1.0, 2.0],"), "timeseries.paper[0].y"),
        (("t = [1.0, 2.0]", "t = [2.0, 1.0]"), "timeseries.paper[0].t"),
        (("{ t = 1.5,", "{ t = 1.5, y = 3.0,"), "timeseries.paper[2].y"),
        (("{ t = 1.5,", "{ t = 4.5,"), "timeseries.paper[2].t"),
        (("{ t = 1.5,", '{ t = "1.5s",'), "timeseries.paper[2].t"),
        (("{ t = 1.5,", "{ colour = 1,"), "timeseries.paper[2].colour"),
        (('where = "Sec. 3", ', ""), "timeseries.paper[2].where"),
    ],
)
def test_bad_timeseries_name_the_field(tmp_path, edit, field):
    root = tmp_path / "papers"
    (root / "tum").mkdir(parents=True)
    assert edit[0] in ENTRY
    (root / "tum" / "tum-fig99-ts.toml").write_text(ENTRY.replace(*edit, 1))
    with pytest.raises(SpecError) as err:
        load_catalogue(root)
    assert f"catalogue.{field}" in str(err.value) and "tum-fig99-ts.toml" in str(err.value)


def test_the_shipped_timeseries_name_real_columns_and_quote_their_place():
    """Every shipped timeseries loads (the checks above ran on it) and each mark says
    where the paper states it."""
    shipped = [e for e in load_catalogue() if e.meta.timeseries is not None]
    assert shipped
    for e in shipped:
        for m in e.meta.timeseries.paper:
            assert m.where.strip() and m.label.strip(), e.name
    assert Path(shipped[0].path).is_file()


def test_a_time_range_and_the_mode_panel(reproduced):
    """time = [1.0, 2.5]: the axes show that range, the flow's line holds only samples in
    it (the series is cut before decimation), a whole-run level spans it; cc_mode is drawn
    as the run report's named mode steps."""
    from tcplab.reproduce.catalogue import Timeseries
    from tcplab.reproduce.timeseries_plot import draw

    _, data, run = _figure(reproduced)
    _, _, results = reproduced
    meta = next(r for r in results if r.entry.name == "tum-fig99-ts").entry.meta
    ts = Timeseries.model_validate(
        {
            "columns": ["throughput_bps", "cc_mode"],
            "time": [1.0, 2.5],
            "paper": [{"column": "throughput_bps", "y": 4e6, "where": "w", "label": "l"}],
        }
    )
    fig = draw(data, ts, meta, run.seed)
    thr, mode = fig.axes[:2]
    assert thr.get_xlim() == (1.0, 2.5)
    level = _marks(thr)["paper: l (w)"]
    assert list(level.get_xdata()) == [1.0, 2.5] and list(level.get_ydata()) == [4.0, 4.0]
    flow = [ln for ln in thr.get_lines() if not ln.get_label().startswith("paper")]
    xs = [x for ln in flow for x in ln.get_xdata() if x == x]
    assert xs and 1.0 <= min(xs) and max(xs) <= 2.5
    assert mode.get_ylabel() == "mode"
    assert "PROBE_BW" in [t.get_text() for t in mode.get_yticklabels()]


def test_the_sweeps_metrics_key_is_not_an_axis(tmp_path):
    """[sweep] metrics lists what the sweep summary plots, not values to run: `at` need
    not name it."""
    root = tmp_path / "papers"
    (root / "tum").mkdir(parents=True)
    text = ENTRY.replace("repeat = 2", 'repeat = 2\nmetrics = ["utilization", "jain_index"]')
    (root / "tum" / "tum-fig99-ts.toml").write_text(text)
    (entry,) = load_catalogue(root)
    assert entry.meta.timeseries.at == {"bottleneck.buffer": "2bdp"}


def test_a_range_beyond_a_shortened_run_draws_the_whole_run(reproduced):
    """--quick can end a run before the entry's range starts (5-6 s of a 3 s run): the
    whole run is drawn, and the title says why."""
    from tcplab.reproduce.catalogue import Timeseries
    from tcplab.reproduce.timeseries_plot import draw

    _, data, run = _figure(reproduced)
    ts = Timeseries.model_validate({"columns": ["throughput_bps"], "time": [5.0, 6.0]})
    fig = draw(data, ts, reproduced[2][0].entry.meta, run.seed)
    assert fig.axes[0].get_xlim() == (0.0, 3.0)
    assert "the whole run: it ends before 5-6 s" in fig._suptitle.get_text()


def test_close_events_tags_are_stacked_not_printed_over_each_other(reproduced):
    """Events 0.05 s apart in a 3 s run (under 3 % of it) get their tags one row apart
    (9 points); one 1 s away stays in the first row."""
    from tcplab.reproduce.catalogue import PaperMark
    from tcplab.reproduce.timeseries_plot import chosen_run, draw, run_dir
    from tcplab.runs.result import load_run

    _, _, results = reproduced
    res = next(r for r in results if r.entry.name == "tum-fig99-ts")
    run = chosen_run(res)
    data = load_run(run_dir(res, run)).run
    marks = [PaperMark(where="w", label=x, t=t) for x, t in (("a", 1.0), ("b", 1.05), ("c", 2.0))]
    ts = res.entry.meta.timeseries.model_copy(update={"paper": marks})
    fig = draw(data, ts, res.entry.meta, run.seed)
    tags = {a.get_text(): a.xyann for a in fig.axes[0].texts if a.get_text().startswith("P")}
    assert tags == {"P1": (2, -2), "P2": (2, -11), "P3": (2, -2)}
