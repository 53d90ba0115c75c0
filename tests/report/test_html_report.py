"""The HTML reports in a real browser: headless Chromium renders the catalogue's report to
a screenshot that must show the page (not a blank or an error page), with the anchors the
Markdown links to; and a run's and a sweep's report.html, whose plots must be drawn
(plotly.js sets a marker on <body> once every figure is, and the screenshot shows the
plot lines' colour). Skips, saying why, where Chromium is missing
(scripts/test.sh installs Debian's chromium as root)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

pytestmark = pytest.mark.engine


def _chromium() -> str | None:
    return next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )


def test_the_catalogue_report_renders_in_a_browser(tmp_path):
    from tcplab.reproduce import reproduce

    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    out = tmp_path / "cat"
    reproduce(["acw-fig05d"], out, quick=True, workers=1, say=lambda *_: None)
    html = (out / "report.html").read_text()
    for anchor in ('id="tallies"', 'id="overview"', 'id="acw-fig05d-lossfree-vs-lossy"'):
        assert anchor in html
    assert 'id="acw-fig05d-lossfree-vs-lossy-1"' in html  # one anchor per claim
    shot = tmp_path / "shot.png"
    r = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1200,1600",
            (out / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), r.stderr[-2000:]
    pixels = image.imread(shot)[..., :3]
    # A rendered page: mostly white background, but text, tables (coloured verdict
    # cells) and the plot make thousands of non-white pixels in several colours.
    non_white = (pixels < 0.95).any(axis=-1)
    assert non_white.sum() > 20_000
    colours = {tuple(np.round(p, 1)) for p in pixels[non_white][::50]}
    assert len(colours) > 10
    Path(out / "shot.png").write_bytes(shot.read_bytes())  # kept beside the report


def _render(browser: str, page: Path, shot: Path) -> str:
    """Screenshot ``page`` into ``shot`` and return the DOM after its scripts ran."""
    common = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--virtual-time-budget=20000",  # let plotly.js draw before the capture
    ]
    r = subprocess.run(
        common + [f"--screenshot={shot}", "--window-size=1300,1400", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert shot.is_file(), r.stderr[-2000:]
    dom = subprocess.run(
        common + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180
    )
    return dom.stdout


def _drawn_plot(shot: Path, colour: tuple[float, float, float]) -> None:
    """The screenshot shows a drawn plot: many non-white pixels, and pixels of the
    algorithm's line colour (no plot, no such pixels: the page text is black)."""
    pixels = image.imread(shot)[..., :3]
    assert (pixels < 0.95).any(axis=-1).sum() > 20_000
    near = (np.abs(pixels - np.array(colour)) < 0.08).all(axis=-1)
    assert near.sum() > 200, near.sum()


def test_the_run_report_html_draws_its_plots_in_a_browser(tmp_path):
    from handmade import handmade_run
    from tcplab.report.run_report import save_report

    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    save_report(handmade_run(), tmp_path)
    page = tmp_path / "report.html"
    html = page.read_text()
    assert "<script src=" not in html  # self-contained: plotly.js is inline
    for text in ('id="metrics"', 'id="spec"', "jain_index", "[experiment]"):
        assert text in html, text
    dom = _render(browser, page, tmp_path / "shot.png")
    # The three figures (time series, CDFs, throughput-delay) drawn: the page sets the marker only
    # after plotly.js resolved every plot.
    assert 'data-plotted="3"' in dom
    assert dom.count('class="main-svg"') >= 2
    _drawn_plot(tmp_path / "shot.png", (0x1F / 255, 0x77 / 255, 0xB4 / 255))  # BBR's blue


def test_the_sweep_report_html_draws_its_plots_in_a_browser(tmp_path):
    import tcplab

    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    spec = tmp_path / "s.toml"
    spec.write_text(
        """
[experiment]
name = "BBR vs CUBIC over the buffer"
duration = "2s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
[[flows]]
cc = "bbr"
rtt = "40ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
[sweep]
repeat = 2
"bottleneck.buffer" = ["0.5bdp", "2bdp"]
"""
    )
    out = tmp_path / "sweep"
    tcplab.sweep(spec, out, workers=1)
    page = out / "report.html"
    html = page.read_text()
    # Titled with the experiment's name, not the directory's ("sweep").
    assert "<h1>Sweep: BBR vs CUBIC over the buffer</h1>" in html
    for text in ("share per algorithm", "buffer (BDP)", "95 % confidence interval"):
        assert text in html, text
    dom = _render(browser, page, tmp_path / "shot.png")
    assert 'data-plotted="1"' in dom
    _drawn_plot(tmp_path / "shot.png", (0x1F / 255, 0x77 / 255, 0xB4 / 255))
