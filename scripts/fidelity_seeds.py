"""Which seeds each scenario of the fidelity suite runs on (scripts/fidelity.py).

The suite runs every scenario on ``--seeds``. A row whose 95 % interval is "undecided" at
that count (the seeds' scatter could make the miss) is decided by more seeds of that
scenario alone, not by more seeds of all nineteen: ``--scenario-seeds STEM=SEEDS`` (once
per scenario) runs and tabulates that scenario on its own seeds, and the document says
which. Kernel runs take their duration in real time, so the choice is per scenario.
Finding 41: f07's +0.18 over ten seeds per backend was +0.064 over 50 and 100.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


def parse_seeds(text: str, option: str = "--seeds") -> list[int]:
    """Seeds as comma-separated numbers and inclusive ranges: '1,2,5-8' -> [1, 2, 5, 6, 7, 8].
    Each seed once, in the order given; a bad item is refused naming the option."""
    seeds: list[int] = []
    for item in text.split(","):
        a, dash, b = item.strip().partition("-")
        try:
            lo = int(a)
            hi = int(b) if dash else lo
        except ValueError:
            raise ValueError(
                f"{option}: {item.strip()!r} is not a seed or a range A-B "
                "(whole numbers, e.g. 1,2,5-8)"
            ) from None
        if lo < 0 or hi < lo:
            raise ValueError(f"{option}: {item.strip()!r}: a range runs from a seed >= 0 upwards")
        seeds += [s for s in range(lo, hi + 1) if s not in seeds]
    return seeds


@dataclass(frozen=True)
class SeedPlan:
    """The suite's seeds and the scenarios (by file stem) that run on others."""

    default: tuple[int, ...]
    per_scenario: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of_args(cls, seeds: str, scenario_seeds: list[str]) -> SeedPlan:
        """From ``--seeds`` and the ``--scenario-seeds STEM=SEEDS`` values."""
        per: dict[str, tuple[int, ...]] = {}
        for arg in scenario_seeds:
            stem, eq, text = arg.partition("=")
            if not eq or not stem.strip():
                raise ValueError(
                    f"--scenario-seeds: {arg!r} is not SCENARIO=SEEDS "
                    "(a spec's file stem, e.g. f07-four-bbr-shallow=1-50)"
                )
            per[stem.strip()] = tuple(parse_seeds(text, f"--scenario-seeds {stem.strip()}"))
        return cls(tuple(parse_seeds(seeds)), per)

    def of(self, spec: Path) -> list[int]:
        return list(self.per_scenario.get(spec.stem, self.default))

    def unknown(self, specs: list[Path]) -> list[str]:
        """Scenario names given seeds that none of ``specs`` has."""
        stems = {s.stem for s in specs}
        return sorted(k for k in self.per_scenario if k not in stems)

    def describe(self, specs: list[Path]) -> str:
        """'seeds 1, 2, 3' and, for scenarios on their own seeds, which ones."""
        text = "seeds " + compact(self.default)
        own = [
            f"{s.stem} on seeds {compact(self.per_scenario[s.stem])}"
            for s in specs
            if s.stem in self.per_scenario
        ]
        if own:
            text += " (" + "; ".join(own) + ", to decide rows the suite's seeds left undecided)"
        return text

    def argv(self) -> str:
        """The options that make this plan, for the document's command line."""
        return "".join(
            f" --scenario-seeds {k}={compact(v, ',')}" for k, v in sorted(self.per_scenario.items())
        )


def compact(seeds: tuple[int, ...] | list[int], sep: str = ", ") -> str:
    """Seeds with runs of three or more consecutive ones as ranges: 1-5, 9 (with ``sep``
    ',' as ``--seeds`` takes them: 1-5,9)."""
    out: list[str] = []
    run: list[int] = []
    for s in list(seeds) + [None]:
        if run and (s is None or s != run[-1] + 1):
            out += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(x) for x in run]
            run = []
        if s is not None:
            run.append(s)
    return sep.join(out)
