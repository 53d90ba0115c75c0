"""Whether two ``tcplab reproduce`` output directories stored the same runs, byte for
byte: every run directory's manifest sha256 table (all files but the manifest, whose
date and wall time differ) and claims.csv. Not a test: the check behind "nothing stored
moved" in benches/RESULTS.md ("Engine speed, third step").

    python benches/compare_runs.py BEFORE_DIR AFTER_DIR
    python benches/compare_runs.py --across-versions BEFORE_DIR AFTER_DIR

Across versions a run's directory name (its digest) covers the tcplab version, so runs
are matched by group and the sha256 of their engine config (world.json) instead, and
summary.json is compared as values less `engine.events_processed` (how many events the
engine took, which 0.14.1 changed without changing a result: benches/RESULTS.md, "ninth
step") and spec.toml less its first line (the version that resolved it); every other
file must match byte for byte.

With ``--across-versions`` the groups where some runs moved are then summed up over their
seeds: per flow, the share's mean before and after and the 95 % interval of the
difference (Welch's t, scripts/seed_spread.py), and the utilization's the same. A change
that only perturbs chaotic runs (0.16.0's order of events due at the same nanosecond:
docs/CHANGELOG.md) moves single seeds but few group means; one that biases a model moves
the means.
"""

from __future__ import annotations

import argparse
import functools
import glob
import importlib.util
import json
import os
import statistics as st
import sys


def manifests(root: str):
    """(run directory, its manifest's sha256 table) for every run under `root`."""
    for m in glob.glob(root + "/**/runs/*/manifest.json", recursive=True):
        with open(m) as fh:
            yield os.path.dirname(m), json.load(fh)["sha256"]


def runs(root: str) -> dict[str, dict[str, str]]:
    return {os.path.relpath(run, root): sha for run, sha in manifests(root)}


def runs_by_config(root: str) -> dict[tuple[str, str], tuple[str, dict[str, str]]]:
    """(run directory, its manifest's sha256 table) keyed by (group, sha256 of
    world.json): stable across versions."""
    return {
        (os.path.relpath(os.path.dirname(run), root), sha["world.json"]): (run, sha)
        for run, sha in manifests(root)
    }


def summary_values(run: str) -> dict:
    """A run's summary.json less the engine's event count."""
    with open(os.path.join(run, "summary.json")) as fh:
        summary = json.load(fh)
    summary.get("engine", {}).pop("events_processed", None)
    return summary


def run_values(run: str) -> tuple[list[str], dict]:
    """A run's spec.toml less the line naming the version that resolved it, and its
    summary.json less the engine's event count."""
    with open(os.path.join(run, "spec.toml")) as fh:
        spec = [ln for ln in fh if not ln.startswith("# Resolved by tcplab")]
    return spec, summary_values(run)


def same_run_across_versions(a: tuple[str, dict], b: tuple[str, dict]) -> list[str]:
    """The files of two runs (same config, two versions; each its directory and manifest
    sha256 table) that differ in what they hold."""
    (a, da), (b, db) = a, b
    values = ("spec.toml", "summary.json")
    differ = [n for n in sorted(set(da) | set(db)) if n not in values and da.get(n) != db.get(n)]
    differ += [n for n, x, y in zip(values, run_values(a), run_values(b), strict=True) if x != y]
    return differ


def claims_identical(a: str, b: str) -> bool:
    with open(os.path.join(a, "claims.csv")) as fa, open(os.path.join(b, "claims.csv")) as fb:
        claims = fa.read() == fb.read()
    print("claims.csv identical:", claims)
    return claims


@functools.cache
def seed_spread():
    """scripts/seed_spread.py, loaded once by path (scripts/ is not a package)."""
    path = os.path.join(os.path.dirname(__file__), "..", "scripts", "seed_spread.py")
    spec = importlib.util.spec_from_file_location("seed_spread", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def group_values(runs: list[str]) -> dict[str, list[float]]:
    """Per group run: each flow's share and the aggregate utilization, by name."""
    out: dict[str, list[float]] = {}
    for run in runs:
        summary = summary_values(run)
        named = [(f"flow {f['flow']} share", f.get("share")) for f in summary["flows"]]
        named.append(("utilization", summary["aggregate"].get("utilization")))
        for name, v in named:
            if v is not None and v == v:  # NaN: a flow that never sent
                out.setdefault(name, []).append(v)
    return out


def moved_groups(ra: dict, rb: dict, moved: set[str]) -> None:
    """The groups with a moved run, over their runs (module notes). A group may hold
    several sweep points; both sides hold the same configs, so the means compare the same
    mixture, and the interval is wider than a point's own (conservative)."""
    pairs: dict[str, tuple[list[str], list[str]]] = {g: ([], []) for g in moved}
    for k in ra:
        if k[0] in moved and k in rb:
            pairs[k[0]][0].append(ra[k][0])
            pairs[k[0]][1].append(rb[k][0])
    shifted = tested = 0
    for group in sorted(moved):
        va, vb = map(group_values, pairs[group])
        for name in va:
            before, after = va[name], vb.get(name, [])
            if len(before) < 2 or len(before) != len(after):
                continue
            lo, hi = seed_spread().welch_interval(before, after)
            tested += 1
            shifted += lo > 0 or hi < 0
            print(
                f"  {group}: {name} over {len(before)} runs: {st.mean(before):.3f} ->"
                f" {st.mean(after):.3f}, difference [{lo:+.3f}, {hi:+.3f}]"
            )
    print(f"group means whose 95 % interval excludes no change: {shifted} of {tested}")


def across_versions(a: str, b: str) -> int:
    ra, rb = runs_by_config(a), runs_by_config(b)
    same = 0
    moved: set[str] = set()
    for k in sorted(ra):
        if k not in rb:
            print("missing after:", k)
            continue
        differ = same_run_across_versions(ra[k], rb[k])
        same += not differ
        if differ:
            print("differs:", k, differ)
            moved.add(k[0])
    print(f"{len(ra)} runs against {len(rb)}; same values (events aside): {same}")
    if moved:
        print(f"groups with a moved run: {len(moved)}")
        moved_groups(ra, rb, moved)
    claims = claims_identical(a, b)
    return 0 if same == len(ra) == len(rb) and claims else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="a `tcplab reproduce -o` directory")
    ap.add_argument("after", help="another, to compare with BEFORE")
    ap.add_argument(
        "--across-versions",
        action="store_true",
        help="match runs by group and engine config, not by directory name (digest)",
    )
    args = ap.parse_args()
    for d in (args.before, args.after):
        if not os.path.isdir(d):
            ap.error(f"{d}: not a directory")
    if args.across_versions:
        return across_versions(args.before, args.after)
    a, b = args.before, args.after
    ra, rb = runs(a), runs(b)
    same = sum(ra[k] == rb.get(k) for k in ra)
    print(f"{len(ra)} runs against {len(rb)}; identical file digests: {same}")
    for k in sorted(ra):
        if ra[k] != rb.get(k):
            other = rb.get(k) or {}
            print("differs:", k, sorted(n for n in ra[k] if ra[k][n] != other.get(n)))
    claims = claims_identical(a, b)
    return 0 if same == len(ra) == len(rb) and claims else 1


if __name__ == "__main__":
    sys.exit(main())
