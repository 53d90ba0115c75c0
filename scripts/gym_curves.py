"""Plot examples/gym_cem.py's validation curves from its printed logs, one line per log:
the mean weight vector's score on the 32 fixed validation episodes after each iteration
(docs/FIDELITY-policy.md's training figures).

    python examples/gym_cem.py --seed 0 ... > aurora-s0.log     (one log per training run)
    python scripts/gym_curves.py aurora-s0.log aurora-s1.log ... -o curve.png \
        [--label LOG=NAME ...] [--title TEXT]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LINE = re.compile(r"^iteration (\d+)/\d+: validation score (-?\d+(?:\.\d+)?)$")


def curve(path: Path) -> list[float]:
    """The validation scores of one log, in iteration order."""
    scores = []
    for line in path.read_text().splitlines():
        m = LINE.match(line.strip())
        if m:
            if int(m.group(1)) != len(scores) + 1:
                raise ValueError(f"{path}: iteration {m.group(1)} out of order")
            scores.append(float(m.group(2)))
    if not scores:
        raise ValueError(f"{path}: no 'iteration i/N: validation score X' lines")
    return scores


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", type=Path, nargs="+")
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--title", default="examples/gym_cem.py: validation score per iteration")
    ap.add_argument(
        "--baseline",
        type=float,
        action="append",
        default=[],
        help="a horizontal line (e.g. the do-nothing policy's score)",
    )
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        curves = {p.stem: curve(p) for p in a.logs}
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, marker=".", label=name)
    for y in a.baseline:
        ax.axhline(y, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("CEM iteration")
    ax.set_ylabel("validation score (mean over 32 episodes)")
    ax.set_title(a.title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = a.out.with_name(a.out.name + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(a.out)  # no partial figure left behind
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
