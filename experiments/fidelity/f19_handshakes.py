"""Lost handshakes: how long each flow waited for its first RTT sample, on both
backends, and what starting the late flows later does to the simulator's shares.
FINDINGS.md / docs/FIDELITY.md, finding 30.

    python experiments/fidelity/f19_handshakes.py RUNS_DIR     # any scenario's stored runs
    python experiments/fidelity/f19_handshakes.py --late 8=1.1 # f19, flow 8 1.1 s later

A Linux client whose SYN is dropped retransmits it after TCP_TIMEOUT_INIT (1 s) and
doubles the wait after each further loss; until the SYN-ACK is back, tcp_info has no
RTT. So a flow whose first smoothed RTT appears a second or more after its start lost a
SYN (or its SYN-ACK). The simulator's handshake is a delay that is never lost
(crates/sim/src/tcp/mod.rs, "Deviations"), so there it is one round trip plus the
queue's wait. The series are sampled every 100 ms, so the waits read to that.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

SPEC = Path(__file__).with_name("f19-ten-flows-mixed-rtt.toml")
LOST_AFTER_S = 0.9  # below TCP_TIMEOUT_INIT's 1 s less one 100 ms sample


def first_rtt_waits(run: Path) -> dict[int, float]:
    """Per flow, seconds from its start to the first sample with a smoothed RTT."""
    series = pd.read_parquet(run / "series.parquet", columns=["time_s", "flow", "srtt_ms"])
    summary = json.loads((run / "summary.json").read_text())
    out = {}
    for f in summary["flows"]:
        seen = series[(series.flow == f["flow"]) & (series.srtt_ms > 0)]
        if len(seen):
            out[f["flow"]] = round(float(seen.time_s.min()) - f["start_s"], 2)
    return out


def stored(runs: Path) -> None:
    for backend in ("sim", "kernel"):
        lost = total = 0
        for run in sorted(runs.glob(f"{backend}-seed*")):
            waits = first_rtt_waits(run)
            late = {f: w for f, w in waits.items() if w >= LOST_AFTER_S}
            lost += len(late)
            total += len(waits)
            print(f"{backend} {run.name}: flows that waited >= 1 s: {late or 'none'}")
        print(f"{backend}: {lost} of {total} flows\n")


def late_starts(shifts: dict[int, float], seeds: range = range(1, 6)) -> None:
    """The simulator's per-flow shares with the given flows started later by the given
    seconds (a lost SYN's wait), against the spec as written."""
    import tcplab
    from tcplab.specs.load import read_toml

    late = read_toml(SPEC)
    for f, s in shifts.items():
        start = late["flows"][f].get("start", "0s")
        late["flows"][f]["start"] = f"{float(start.rstrip('s')) + s:g}s"
    for label, spec in (("as written", read_toml(SPEC)), (f"later {shifts}", late)):
        for seed in seeds:
            shares = tcplab.run(spec, seed=seed, report=False).summary["share"]
            print(f"{label} seed {seed}: shares " + " ".join(f"{x:.2f}" for x in shares))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--late"]:
        pairs = (a.split("=") for a in sys.argv[2].split(","))
        late_starts({int(f): float(s) for f, s in pairs})
    else:
        stored(Path(sys.argv[1]))
