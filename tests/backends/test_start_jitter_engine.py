"""`tcp.start_jitter` on the engine (crates/sim/src/start_jitter.rs): off, it gives the
engine's results from before it existed bit for bit; on (the default), seeds give
different runs of a scenario that draws nothing else, and one seed repeats exactly.

snapshots/no_jitter_digests.json holds three engine configs and the sha256 of the
engine's raw output for each, made with tcplab 0.5.2 (main at dfc8471, before the
field): two CUBIC flows due at the same instant, BBR against CUBIC with random loss, and
two staggered Reno flows. BBR against CUBIC was re-recorded with 0.9.0, whose receiver
ACK timing (crates/sim/src/tcp/delack.rs) changed its events_processed by one (55312 ->
55311) and no counter or series value; all three with 0.14.0, whose receive buffer no
longer grows at a hole's fill (crates/sim/src/tcp/rcv_space.rs) and moves each. The
digests cover the output less its `links` (0.11: the links as built, a field added after
them and tested in tests/analysis/test_engine_links.py) and, since 0.14.1, less
`events_processed` (0.14.1 handles fewer events for the same results, net/link.rs
"Departures without events"; the three digests were re-made without it by 0.14.0's
engine, main at 053bdd5, and 0.14.1's gives the same), so they hold every other value."""

import copy
import hashlib
import json
from pathlib import Path

import pytest
from tcplab.engine import engine

pytestmark = pytest.mark.engine

GOLDEN = json.loads((Path(__file__).parent / "snapshots" / "no_jitter_digests.json").read_text())


def _digest(config: dict) -> str:
    raw = engine().run(json.dumps(config, sort_keys=True))
    raw.pop("links")  # newer than the digests (module doc); present in every output
    raw.pop("events_processed")  # how the engine got there, not what it computed (0.14.1)
    return hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()


def _with_jitter(config: dict, ns: int | None, seed: int | None = None) -> dict:
    c = copy.deepcopy(config)
    if ns is not None:
        c["tcp"]["start_jitter_ns"] = ns
    if seed is not None:
        c["seed"] = seed
    return c


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_no_jitter_gives_the_results_from_before_it_bit_for_bit(name):
    g = GOLDEN[name]
    assert _digest(_with_jitter(g["config"], 0)) == g["sha256"]


def test_the_default_jitter_moves_a_same_start_run():
    g = GOLDEN["two-cubic-same-start"]
    assert _digest(_with_jitter(g["config"], None)) != g["sha256"]


def test_seeds_differ_and_one_seed_repeats_with_the_default_jitter():
    base = GOLDEN["two-cubic-same-start"]["config"]
    digests = {s: _digest(_with_jitter(base, None, seed=s)) for s in (1, 2, 3)}
    assert len(set(digests.values())) == 3, digests
    assert _digest(_with_jitter(base, None, seed=2)) == digests[2]
