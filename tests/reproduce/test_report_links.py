"""A catalogue report's links to its entries work wherever the report is written: it
keeps a copy of each entry's TOML and links there; docs/RESULTS.md links to the
repository's own files (the links pointed at ../experiments/..., dead outside
a checkout)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tcplab.cli.app import main

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]


def _targets(text: str) -> list[str]:
    return re.findall(r"\]\(((?:catalogue|\.\./experiments)/[^)#]+)", text)


def test_links_reach_the_entries_copy_and_the_docs_the_repository(tmp_path):
    out, docs = tmp_path / "away" / "cat", tmp_path / "docs"
    assert (
        main(["reproduce", "acw-fig05d", "--quick", "-o", str(out), "--docs", str(docs), "-q"]) == 0
    )
    md = (out / "report.md").read_text()
    targets = _targets(md)
    assert targets and all(t.startswith("catalogue/") for t in targets), targets
    for t in set(targets):
        copy = out / t
        assert copy.is_file(), t
        assert (
            copy.read_bytes()
            == (REPO / "experiments" / "papers" / t.removeprefix("catalogue/")).read_bytes()
        )
    html = (out / "report.html").read_text()
    assert 'href="catalogue/acw/' in html and "../experiments" not in html
    in_docs = _targets((docs / "RESULTS.md").read_text())
    assert in_docs and all(t.startswith("../experiments/papers/") for t in in_docs), in_docs
    for t in set(in_docs):  # as docs/RESULTS.md sits in the repository's docs/
        assert (REPO / "docs" / t).resolve().is_file(), t
