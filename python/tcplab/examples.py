"""The examples tcplab ships inside the package, so that a wheel user can copy what the
README shows: the quickstart and sweep specs, the BPF spec, the first-hour notebook, and
the BPF congestion controls (``cc = "bpf:NAME"``).

In a checkout, ``experiments/quickstart.toml`` and ``examples/first_hour.ipynb`` are
byte-identical copies of these files (copies, not links, so that a ``cp -r`` of the
checkout's folders works; tests/cli/test_examples.py holds them equal). ``tcplab
examples`` lists them and copies them out (``tcplab examples quickstart``), refusing to
replace a file that is already there.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
# Folders of data/examples copied whole, and the file whose docstring describes each:
# "gym" is the learning example (gym_cem.py, its notebook, gym_ppo.py for the rl extra,
# the training and held-out scenarios, and preset.toml running the preset file
# preset_orca.py), whose scripts find the scenario files beside them.
BUNDLE_MAIN = {"gym": "gym_cem.py"}
SPECS_AND_NOTEBOOKS = DATA / "examples"
BPF_PROGRAMS = DATA / "bpf" / "examples"


@dataclass(frozen=True)
class Example:
    """One shipped example: its short name, what it is, where it is and its first line."""

    name: str
    kind: str  # "spec", "notebook", "bpf" or "bundle" (a folder, copied whole)
    path: Path
    summary: str


def _summary(path: Path) -> str:
    """The first line of a spec's or program's leading comment; a notebook's title; a
    bundle's BUNDLE_MAIN file's docstring."""
    if path.is_dir():
        main = path / BUNDLE_MAIN.get(path.name, "")
        if main.is_file():
            doc = main.read_text(encoding="utf-8").split('"""')
            return doc[1].strip().splitlines()[0].rstrip(",") if len(doc) > 1 else ""
        return ""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(cells[0]["source"]).splitlines()[0] if cells else ""
        return first.lstrip("# ").strip()
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip().lstrip("#/*").strip()
        if text and not text.startswith("SPDX-License-Identifier"):
            # "cubic.bpf.c: CUBIC with HyStart, ..." reads as its description.
            return text.removeprefix(f"{path.name}:").strip()
    return ""


def examples() -> list[Example]:
    """Every shipped example, specs and notebooks first, then the BPF programs."""
    out = []
    for p in sorted(SPECS_AND_NOTEBOOKS.iterdir()):
        if p.is_dir() and p.name in BUNDLE_MAIN:
            out.append(Example(p.name, "bundle", p, _summary(p)))
        elif p.suffix in (".toml", ".ipynb"):
            kind = "spec" if p.suffix == ".toml" else "notebook"
            out.append(Example(p.stem, kind, p, _summary(p)))
    for p in sorted(BPF_PROGRAMS.glob("*.bpf.c")):
        out.append(Example(p.name.removesuffix(".bpf.c"), "bpf", p, _summary(p)))
    return out


def example_path(name: str) -> Path:
    """The file of the shipped example ``name`` (``"quickstart"``, ``"first_hour"``,
    ``"cubic"``; the file name with its suffix works too).

    Raises
    ------
    KeyError
        No example has that name; the message lists those that do.
    """
    for ex in examples():
        if name in (ex.name, ex.path.name):
            return ex.path
    raise KeyError(
        f"no shipped example is named {name!r}; there are: "
        + ", ".join(ex.name for ex in examples())
    )


def copy_examples(names: list[str], dest: Path) -> list[Path]:
    """Copy the examples ``names`` into the directory ``dest`` (made if missing) under
    their file names (a bundle as its folder, whole). Nothing is copied if any name is unknown or any target exists.

    Raises
    ------
    KeyError
        An unknown name.
    FileExistsError
        A target file exists (it is never replaced); the message names every one.
    """
    sources = [example_path(n) for n in names]
    targets = [dest / s.name for s in sources]
    taken = [str(t) for t in targets if t.exists() or t.is_symlink()]
    if taken:
        raise FileExistsError(
            f"already there (tcplab replaces no file it did not write): {', '.join(taken)}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    for s, t in zip(sources, targets):
        if s.is_dir():
            shutil.copytree(s, t, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(s, t)
    return targets
