"""A BPF program's maps at the end of a run are in the run directory (bpf_maps.json):
every map of each loaded program, its global sections as libbpf's one-entry ARRAY maps
named by section, with its entries in hex (issue 27). The program is
tests/bpf_programs/counting_reno.bpf.c: a .bss count of sockets started, an ARRAY of
three counters and a HASH of one entry. The kernel backend's twin is
tests/backends/test_kernel_bpf_maps.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tcplab

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        shutil.which("clang") is None or not Path("/usr/include/bpf/bpf_helpers.h").is_file(),
        reason="needs clang and libbpf-dev's headers (apt-get install clang libbpf-dev)",
    ),
]
PROGRAM = Path(__file__).resolve().parents[1] / "bpf_programs" / "counting_reno.bpf.c"


def spec(backend: str) -> dict:
    return {
        "experiment": {"duration": "5s", "sample_interval": "100ms", "backend": backend},
        "tcp": {"hz": 250},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "0.5bdp"},
        "flows": [{"cc": f"bpf:{PROGRAM}", "rtt": "40ms", "count": 2}],
    }


def u64(hexbytes: str) -> int:
    return int.from_bytes(bytes.fromhex(hexbytes), "little")


def check_counting_reno(run_dir: Path, summary: dict, sockets: int) -> None:
    """What counting_reno's maps must hold after two Reno flows on half a BDP of buffer:
    ``sockets`` inits counted in .bss; key 7 -> 1 in ``marks``; in ``counts`` slot 0
    the ssthresh calls and slot 1 the entries into Recovery (each entry calls ssthresh
    first, and each needs a retransmission, so 1 <= slot 1 <= slot 0 <= all
    retransmissions), slot 2 the last ssthresh, Reno's cwnd / 2, at least 2."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "bpf_maps.json" in manifest["sha256"]
    (prog,) = json.loads((run_dir / "bpf_maps.json").read_text())["programs"]
    assert prog["program"] == "counting_reno"
    maps = {m["name"]: m for m in prog["maps"]}
    assert {".bss", "counts", "marks"} <= set(maps)
    shape = {k: (maps[k]["type"], maps[k]["key_size"], maps[k]["value_size"]) for k in maps}
    # enum bpf_map_type: BPF_MAP_TYPE_HASH 1, BPF_MAP_TYPE_ARRAY 2
    assert shape["counts"] == (2, 4, 8) and maps["counts"]["max_entries"] == 3
    assert shape["marks"] == (1, 4, 8) and maps["marks"]["max_entries"] == 4
    assert [u64(e["value"]) for e in maps[".bss"]["entries"]] == [sockets]
    assert [(e["key"], u64(e["value"])) for e in maps["marks"]["entries"]] == [("07000000", 1)]
    keys = [e["key"] for e in maps["counts"]["entries"]]
    assert keys == ["00000000", "01000000", "02000000"]
    calls, recoveries, last = (u64(e["value"]) for e in maps["counts"]["entries"])
    retx = sum(f["retransmitted_packets"] for f in summary["flows"])
    assert 1 <= recoveries <= calls <= retx, (recoveries, calls, retx)
    assert last >= 2


def test_the_simulators_maps_are_written_at_the_end(tmp_path):
    r = tcplab.run(spec("sim"), out=tmp_path / "run", report=False)
    # The simulator runs the program on the two senders only (a receiver runs it for an
    # ECN echo alone): two inits.
    check_counting_reno(tmp_path / "run", r.summary_json, sockets=2)


def test_a_run_without_bpf_writes_no_maps(tmp_path):
    s = spec("sim")
    s["flows"][0]["cc"] = "reno"
    tcplab.run(s, out=tmp_path / "run", report=False)
    assert not (tmp_path / "run" / "bpf_maps.json").exists()
