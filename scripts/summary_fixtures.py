"""Regenerates the stored summary fixtures: each tests/analysis/snapshots/summaries/NAME.toml
is run (report off) and its summary.json written beside it as NAME.summary.json, in the
form a run directory holds it (``json.dumps(indent=1)`` and a newline).
tests/analysis/test_per_flow.py compares every run's summary with these to the last digit.

Run it with the analysis code whose numbers the fixtures should hold (the commit before a
change that is meant to move them, or after an engine change that moves the runs, and
say so in the commit):

    python scripts/summary_fixtures.py            # all four
    python scripts/summary_fixtures.py sync many  # some
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "analysis" / "snapshots" / "summaries"


def regenerate(name: str) -> Path:
    import tcplab  # after argument handling: the engine is needed only for a run

    result = tcplab.run(FIXTURES / f"{name}.toml", report=False)
    out = FIXTURES / f"{name}.summary.json"
    out.write_text(json.dumps(result.summary_json, indent=1, allow_nan=False) + "\n")
    return out


def main(argv: list[str]) -> int:
    known = sorted(p.name.removesuffix(".toml") for p in FIXTURES.glob("*.toml"))
    names = argv or known
    unknown = [n for n in names if n not in known]
    if unknown:
        print(
            f"unknown fixture(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr
        )
        return 2
    for name in names:
        print(regenerate(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
