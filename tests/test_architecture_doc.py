"""docs/ARCHITECTURE.md names every source file, so a reader can find each one's job there
and a new file cannot land undocumented. A file counts as named when its file name
appears as a word ("emu.rs", "netem.py"), or, inside a sub-folder the layout lists by a
concern per file (crates/cc/src/bbr/: "round, bw, startup"), when its stem does. Package
entry files (__init__.py, mod.rs, lib.rs, main.rs) are described by their folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
ENTRY_FILES = {"__init__.py", "mod.rs", "lib.rs", "main.rs"}
# Folders whose files the layout names by concern, without the extension.
BY_CONCERN = {"crates/cc/src/bbr", "crates/cc/src/bbr3"}


def _sources() -> list[Path]:
    found = [p for p in (ROOT / "crates").rglob("*.rs") if "target" not in p.parts]
    found += list((ROOT / "python" / "tcplab").rglob("*.py"))
    for folder, pattern in (("scripts", "*.py"), ("scripts", "*.sh"), ("benches", "*.py")):
        found += list((ROOT / folder).glob(pattern))
    return sorted(p for p in found if p.name not in ENTRY_FILES)


def _named(path: Path, doc: str) -> bool:
    def word(text: str) -> bool:
        return re.search(r"(?<![\w.])" + re.escape(text) + r"(?![\w])", doc) is not None

    if word(path.name):
        return True
    folder = path.parent.relative_to(ROOT).as_posix()
    return folder in BY_CONCERN and word(path.stem)


def test_every_source_file_is_named_in_architecture_md():
    doc = DOC.read_text(encoding="utf-8")
    missing = [p.relative_to(ROOT).as_posix() for p in _sources() if not _named(p, doc)]
    assert not missing, (
        "docs/ARCHITECTURE.md does not name these files; add each to the layout with its "
        "job: " + ", ".join(missing)
    )


def test_the_check_can_fail():
    """A file whose name is nowhere in the text is reported."""
    assert not _named(ROOT / "python" / "tcplab" / "no_such_module.py", "specs/ model.py")
    assert _named(
        ROOT / "crates" / "cc" / "src" / "bbr" / "round.rs", "one file per concern: round, bw"
    )
