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
"""

from __future__ import annotations

import glob
import json
import os
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


def run_values(run: str) -> tuple[list[str], dict]:
    """A run's spec.toml less the line naming the version that resolved it, and its
    summary.json less the engine's event count."""
    with open(os.path.join(run, "spec.toml")) as fh:
        spec = [ln for ln in fh if not ln.startswith("# Resolved by tcplab")]
    with open(os.path.join(run, "summary.json")) as fh:
        summary = json.load(fh)
    summary.get("engine", {}).pop("events_processed", None)
    return spec, summary


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


def across_versions(a: str, b: str) -> int:
    ra, rb = runs_by_config(a), runs_by_config(b)
    same = 0
    for k in sorted(ra):
        if k not in rb:
            print("missing after:", k)
            continue
        differ = same_run_across_versions(ra[k], rb[k])
        same += not differ
        if differ:
            print("differs:", k, differ)
    print(f"{len(ra)} runs against {len(rb)}; same values (events aside): {same}")
    claims = claims_identical(a, b)
    return 0 if same == len(ra) == len(rb) and claims else 1


def main() -> int:
    if sys.argv[1] == "--across-versions":
        return across_versions(sys.argv[2], sys.argv[3])
    a, b = sys.argv[1], sys.argv[2]
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
