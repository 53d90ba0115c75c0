"""Whether two ``tcplab reproduce`` output directories stored the same runs, byte for
byte: every run directory's manifest sha256 table (all files but the manifest, whose
date and wall time differ) and claims.csv. Not a test: the check behind "nothing stored
moved" in benches/RESULTS.md ("Engine speed, third step").

    python benches/compare_runs.py BEFORE_DIR AFTER_DIR
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


def main() -> int:
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
