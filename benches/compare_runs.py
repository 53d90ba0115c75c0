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


def runs(root: str) -> dict[str, dict[str, str]]:
    out = {}
    for m in glob.glob(root + "/**/runs/*/manifest.json", recursive=True):
        with open(m) as fh:
            out[os.path.relpath(os.path.dirname(m), root)] = json.load(fh)["sha256"]
    return out


def runs_by_config(root: str) -> dict[tuple[str, str], str]:
    """Run directories keyed by (group, sha256 of world.json): stable across versions."""
    out = {}
    for m in glob.glob(root + "/**/runs/*/manifest.json", recursive=True):
        run = os.path.dirname(m)
        with open(m) as fh:
            world = json.load(fh)["sha256"]["world.json"]
        out[(os.path.relpath(os.path.dirname(run), root), world)] = run
    return out


def same_run_across_versions(a: str, b: str) -> list[str]:
    """The files of two runs (same config, two versions) that differ in what they hold."""
    with open(os.path.join(a, "manifest.json")) as fa, open(os.path.join(b, "manifest.json")) as fb:
        da, db = json.load(fa)["sha256"], json.load(fb)["sha256"]
    values = ("summary.json", "spec.toml")
    differ = [n for n in sorted(set(da) | set(db)) if n not in values and da.get(n) != db.get(n)]
    specs = []
    for run in (a, b):
        with open(os.path.join(run, "spec.toml")) as fh:
            # Its first line names the version that resolved it.
            specs.append([ln for ln in fh if not ln.startswith("# Resolved by tcplab")])
    if specs[0] != specs[1]:
        differ.append("spec.toml")
    summaries = []
    for run in (a, b):
        with open(os.path.join(run, "summary.json")) as fh:
            s = json.load(fh)
        s.get("engine", {}).pop("events_processed", None)
        summaries.append(s)
    if summaries[0] != summaries[1]:
        differ.append("summary.json")
    return differ


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
    with open(os.path.join(a, "claims.csv")) as fa, open(os.path.join(b, "claims.csv")) as fb:
        claims = fa.read() == fb.read()
    print("claims.csv identical:", claims)
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
    with open(os.path.join(a, "claims.csv")) as fa, open(os.path.join(b, "claims.csv")) as fb:
        claims = fa.read() == fb.read()
    print("claims.csv identical:", claims)
    return 0 if same == len(ra) == len(rb) and claims else 1


if __name__ == "__main__":
    sys.exit(main())
