"""The catalogue's HTML report in a real browser: headless Chromium renders it to a
screenshot that must show the page (not a blank or an error page), and the page carries
the anchors the Markdown links to. Skips, saying why, where Chromium is missing
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
