"""The project's own files a user or a citing author reads first: LICENSE says the licence
pyproject.toml declares, and CITATION.cff names the version being released."""

from __future__ import annotations

import re
from pathlib import Path

from tcplab.specs.load import tomllib  # tomli before Python 3.11

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_license_file_is_the_declared_licence():
    declared = _pyproject()["license"]["text"]
    assert declared == "MIT"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n"), text[:40]
    assert "Permission is hereby granted, free of charge" in text


def test_citation_names_this_version_and_licence():
    cff = (REPO / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^([a-z-]+): *\"?([^\"\n]*)\"?$", cff, flags=re.M))
    assert fields["cff-version"] == "1.2.0"
    assert fields["version"] == _pyproject()["version"], "bump CITATION.cff with the version"
    assert fields["license"] == "MIT"
    assert fields["title"].startswith("tcplab")
