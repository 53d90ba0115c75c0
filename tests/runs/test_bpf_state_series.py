"""A BPF flow's own state as series: ``flows[i].bpf.state`` names the struct the program
keeps in ``inet_csk_ca(sk)`` and each of its fields is recorded as
``cc_<struct>_<field>`` (crates/bpf/src/object/state_series.rs). The shipped cubic.bpf.c keeps
``struct bictcp``; a run of it is the native CUBIC's bit for bit, so its fields must read
what native CUBIC's own info reports at every sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tcplab
from tcplab.errors import SpecError

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(shutil.which("clang") is None, reason="needs clang (apt-get install clang)"),
]


def spec(cc: str, bpf: dict | None = None) -> dict:
    flow: dict = {"cc": cc, "rtt": "40ms"}
    if bpf is not None:
        flow["bpf"] = bpf
    return {
        "experiment": {"duration": "8s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "0.5bdp"},
        "flows": [flow],
    }


def test_the_state_struct_reads_what_the_native_twin_reports():
    native = tcplab.run(spec("cubic")).series
    bpf = tcplab.run(spec("bpf:cubic", {"state": "bictcp"})).series
    # bictcp.last_max_cwnd is native CUBIC's w_max_pkts, bictcp.cnt its cnt_acks, and
    # bictcp.last_cwnd is the cwnd (packets) of the last cubic update
    assert (bpf["cc_bictcp_last_max_cwnd"] == native["cc_w_max_pkts"]).all()
    assert (bpf["cc_bictcp_cnt"] == native["cc_cnt_acks"]).all()
    # half a BDP of buffer: CUBIC loses and sets a W_max within the first seconds
    assert bpf["cc_bictcp_last_max_cwnd"].max() > 10
    # delay_min is in microseconds (native reports ms): the 40 ms path plus one
    # 1500-byte packet's 0.6 ms at 20 Mbit/s and the ACK's, never below 40 ms
    us = bpf["cc_bictcp_delay_min"]
    assert (us[us > 0] >= 40_000).all() and (us[us > 0] < 42_000).all()
    assert ((us[us > 0] / 1000) == native["cc_delay_min_ms"][us > 0]).all()


def test_a_struct_the_object_lacks_is_refused_listing_the_ones_it_has():
    with pytest.raises(SpecError) as e:
        tcplab.run(spec("bpf:cubic", {"state": "bbr"}))
    msg = str(e.value)
    assert "flows[0].bpf.state" in msg and 'no struct "bbr"' in msg and "bictcp" in msg


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        (spec("bpf:cubic", {"state": "not a name"}), "flows[0].bpf.state"),
        (spec("cubic", {"state": "bictcp"}), "flows[0].bpf"),
    ],
)
def test_a_bad_state_names_the_field(flow, field):
    with pytest.raises(SpecError) as e:
        tcplab.run(flow)
    assert field in str(e.value)


def test_the_kernel_backend_says_it_does_not_record_the_state():
    from tcplab.backends.kernel.run import kernel_metadata
    from tcplab.specs.load import parse_spec

    meta = kernel_metadata(parse_spec(spec("bpf:cubic", {"state": "bictcp"})))
    assert any(
        w.startswith("flows[0].bpf.state: struct bictcp is recorded in the simulator only")
        for w in meta["warnings"]
    ), meta["warnings"]


def test_the_examples_state_is_in_the_series_file(tmp_path: Path):
    out = tmp_path / "run"
    tcplab.run(spec("bpf:cubic", {"state": "bictcp"}), out=out)
    import pandas as pd

    cols = pd.read_parquet(out / "series.parquet").columns
    assert {"cc_bictcp_cnt", "cc_bictcp_last_max_cwnd", "cc_bictcp_found"} <= set(cols)
