"""The papers' seed counts, and more seeds where the seeds cannot decide.

Every judged claim is first raised to its paper's number of repetitions at the grid points
it reads (``runner._more_seeds``): an entry's ``repeat`` is a first pass, never the count a
label stands on. Then a claim is *inconclusive* when the 95 % interval of its margin over
the seeds straddles the check's edge (``judge.py``). Before saying so, the runner gives it
more seeds: the entry's ``repeat`` is doubled, up to a cap, but only at the grid points the undecided
claims read (their ``at`` and ``of_at`` points; an axis they do not name, or one they
compare ``across``, keeps all its values). The extra runs form a sweep of their own in
``<entry dir>/more-seeds/`` next to the entry's sweep, so each directory stays an ordinary
sweep; the runs both share are hard-linked from the entry's cache, not recomputed. Every
claim is then judged again on all the runs (a decided claim at those points gets the
extra seeds too). A claim still undecided at the cap is reported inconclusive with its n.

The cap is the paper's own number of repetitions where it states one, else
:data:`DEFAULT_CAP`:

* ACD: "We performed 30 separate simulation experiments in the same scenario" (Sec. 3.4);
* ACW: "the experiment was repeated 10 times for each test case and lasts 300 s" (Sec. 5);
* TUM: "measurements were repeated five times" (Sec. 4);
* CWS and BBR' state no count: 10, our choice (a 95 % interval over 10 seeds is within
  ~1.4x of its width at 30, so more seeds rarely decide a claim that 10 could not).

An entry may set ``[catalogue] max_seeds`` to lower it (the report says so, and its labels
are counted apart as resting on fewer seeds than the paper's); no shipped entry does.
``--quick`` never adds seeds.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tcplab.runs.sweep import RESERVED
from tcplab.storage.directory import is_run_dir
from tcplab.version import __version__

PAPER_SEEDS = {"acd": 30, "acw": 10, "tum": 5}
# Run lengths a paper states for all its experiments: ACW Sec. 5, "lasts 300 s" (ACD's
# 300 s and TUM's per-figure lengths are in each entry already).
PAPER_DURATION_S = {"acw": 300.0}
DEFAULT_CAP = 10
MORE_SEEDS_DIR = "more-seeds"


def seed_cap(paper: str, max_seeds: int | None) -> int:
    """The most seeds an entry's undecided claims get."""
    cap = PAPER_SEEDS.get(paper, DEFAULT_CAP)
    return min(cap, max_seeds) if max_seeds is not None else cap


def next_repeat(repeat: int, cap: int) -> int | None:
    """The next seed count to try (doubling), or None at the cap."""
    return None if repeat >= cap else min(cap, max(2, repeat * 2))


def restricted(raw: dict[str, Any], claims: list[Any], repeat: int) -> dict[str, Any] | None:
    """The entry's sweep spec with ``repeat`` seeds, its axes cut to the values that the
    ``claims`` read; None when no point is left."""
    axes = {k: v for k, v in (raw.get("sweep") or {}).items() if k not in RESERVED}
    wanted: dict[str, set[str]] = {}
    free: set[str] = set()
    for c in claims:
        for axis in (c.across, c.of_across):
            if axis:
                free.add(axis)
        # The weaker form's reference may sit at a point of its own (``weaker.of_at``):
        # without it a control's or extra seeds' weaker check had nothing to compare with.
        weaker_of_at = c.weaker.of_at if c.weaker and c.weaker.of_at is not None else {}
        baseline = getattr(c, "baseline", None) or {}
        named = set(c.at) | set(c.of_at) | set(weaker_of_at) | set(baseline)
        for axis in axes:
            if axis not in named:
                free.add(axis)
        # the baseline's points too: its check is read with the claim's seeds
        for where in (c.at, {**c.at, **c.of_at}, {**c.at, **weaker_of_at}, {**c.at, **baseline}):
            for axis, v in where.items():
                values = v if isinstance(v, list) else [v]
                wanted.setdefault(axis, set()).update(str(x) for x in values)
    sweep = dict(raw.get("sweep") or {})
    for axis, values in axes.items():
        if axis in free:
            continue
        kept = [x for x in values if str(x) in wanted.get(axis, set())]
        if not kept:
            return None
        sweep[axis] = kept
    sweep["repeat"] = repeat
    return {**raw, "sweep": sweep}


def seed_cache(entry_dir: Path, digests: list[str]) -> Path:
    """``<entry_dir>/more-seeds/`` with the entry's finished runs among ``digests``
    hard-linked into its cache (so the extra sweep recomputes none of them)."""
    more = entry_dir / MORE_SEEDS_DIR
    (more / "runs").mkdir(parents=True, exist_ok=True)
    if not (more / "sweep.json").exists():
        # A sweep.json of ours (an empty plan, which the sweep rewrites at its start) makes
        # the directory a sweep's for run_sweep; a .lock alone no longer does.
        (more / "sweep.json").write_text(
            json.dumps({"tcplab_version": __version__, "axes": {}, "repeat": 1, "runs": []})
        )
    for d in digests:
        src, dst = entry_dir / "runs" / d, more / "runs" / d
        if dst.exists() or not is_run_dir(src):
            continue
        try:
            shutil.copytree(src, dst, copy_function=os.link)
        except OSError:  # another file system: copy instead
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
    return more
