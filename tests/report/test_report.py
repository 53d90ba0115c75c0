"""The report and the summary on a hand-made run (tests/handmade.py), no engine needed."""

import json

import pytest
from handmade import handmade_run
from tcplab.analysis.summary import summarize
from tcplab.report.run_report import save_report


def test_summary_of_handmade_run():
    r = handmade_run()
    a = r.aggregate
    # goodput bytes 7.9 + 7.9 + 4.9 = 20.7 MB = 165.6 Mbit over 20 Mbit/s * 10 s = 200 Mbit -> 0.828
    assert a["utilization"] == pytest.approx(0.828)
    assert a["total_goodput_bps"] == pytest.approx(16.56e6)
    # throughput of flows 0, 1 over 10 s: 6.4 Mbit/s; flow 2 over its 8 s: 5 Mbit/s
    assert r.summary["throughput_bps"].tolist() == pytest.approx([6.4e6, 6.4e6, 5e6])
    # F_tp = (17.8)^2 / (3 * (6.4^2 * 2 + 25)) = 316.84 / 320.76 = 0.98778
    assert a["jain_index"] == pytest.approx(316.84 / 320.76)
    # retransmission rate 18 / 16000
    assert a["retransmission_rate"] == pytest.approx(18 / 16000)
    assert a["bottleneck_drops_packets"] == 30
    # both BBR flows show PROBE_RTT from sample 30 to 99: 70 samples * 0.1 s
    assert a["probe_rtt_overlap_s"] == pytest.approx(7.0)
    assert r.summary_json["by_cc"]["bbr"]["flows"] == 2


def test_summary_is_json_clean():
    text = json.dumps(summarize(handmade_run().run), allow_nan=False)
    assert "NaN" not in text


def test_report_files_are_written_and_deterministic(tmp_path):
    r = handmade_run()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # The default report: the PNG and the HTML page, no PDF.
    assert save_report(r, tmp_path / "a") == ["report.png", "report.html"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["report.html", "report.png"]
    # With pdf=True the same two files and report.pdf; the same bytes every time.
    assert save_report(r, tmp_path / "b", pdf=True) == ["report.png", "report.pdf", "report.html"]
    (tmp_path / "c").mkdir()
    save_report(r, tmp_path / "c", pdf=True)
    for name in ("report.png", "report.pdf", "report.html"):
        b = (tmp_path / "b" / name).read_bytes()
        assert len(b) > 50_000
        assert b == (tmp_path / "c" / name).read_bytes()
    assert (tmp_path / "b" / "report.pdf").read_bytes().startswith(b"%PDF-")
    # Asking for the PDF does not change the other files.
    for name in ("report.png", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_report_has_a_panel_per_quantity_with_units():
    fig = handmade_run().report()
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    for expected in [
        "throughput [Mbit/s]",
        "goodput, 200 ms mean [Mbit/s]",
        "sending rate [Mbit/s]",
        "RTT [ms]",
        "cwnd [packets]",
        "inflight [packets]",
        "pacing rate [Mbit/s]",
        "backlog [packets]",
        "Jain index F",
        "mode",
        "packets / interval",
        "fraction of samples",
    ]:
        assert expected in labels, expected
    legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend_texts == ["flow 0 (bbr, 20 ms)", "flow 1 (bbr, 20 ms)", "flow 2 (cubic, 20 ms)"]


def test_the_png_and_the_html_have_the_same_panels():
    # Before, report.html lacked six of report.png's panels (sending rate, pacing rate,
    # Jain over time, BBR bandwidth, min_rtt, mode). One list for both: every panel of
    # TIME_PANELS is drawn in both, in the HTML in the list's order.
    import re

    from tcplab.report.html import run_html
    from tcplab.report.series import TIME_PANELS

    result = handmade_run()
    titles = [ax.get_title(loc="left") for ax in result.report().axes]
    html = run_html(result)
    # Each panel's title is an annotation of the time-series figure's JSON.
    shown = re.findall(r'"text":"((?:[^"\\]|\\.)*)","xref":"paper"', html)
    assert len(shown) == len(TIME_PANELS), shown
    for (key, title), in_html in zip(TIME_PANELS, shown):
        assert in_html.startswith(title), (key, in_html)
        assert any(t.startswith(title) for t in titles), (key, titles)
    # The handmade BBR flows report a bandwidth estimate, min_rtt and modes: drawn, not
    # "not reported", in both.
    for title in ("BBR bottleneck bandwidth estimate", "BBR min_rtt estimate"):
        assert not any(s.startswith(title) and "no algorithm" in s for s in shown), shown


def test_the_html_tables_show_the_pngs_units():
    # 1.22323e+07 bit/s printed raw in the page where report.png says 12.23M.
    from tcplab.report.html import run_html

    html = run_html(handmade_run())
    assert "e+0" not in html.split('id="metrics"')[1].split('id="spec"')[0]
    assert "total_goodput_bps [Mbit/s]" in html and "goodput_bps [Mbit/s]" in html
    assert '<div class="wide">' in html  # the per-flow table scrolls, not the page
