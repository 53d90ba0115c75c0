"""[tcp] ecn, [[flows]] ecn and [bottleneck] aqm: parsing, defaults, errors naming
the field, the engine config they produce (and that they leave older specs' configs
unchanged), and an end-to-end run with marks in queue.csv and summary.json."""

import json

import pytest
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.specs.load import load_spec

BASE = """
[experiment]
name = "t"
duration = "2s"

[bottleneck]
rate = "10Mbps"
delay = "2ms"
{bottleneck}

[[flows]]
cc = "cubic"
rtt = "20ms"
{flow}
"""


def spec(write_spec, bottleneck="", flow="", tcp=""):
    text = BASE.format(bottleneck=bottleneck, flow=flow)
    if tcp:
        text += "\n[tcp]\n" + tcp + "\n"
    return load_spec(write_spec(text))


def errors(write_spec, **kw):
    with pytest.raises(SpecError) as info:
        world_config(spec(write_spec, **kw))
    return str(info.value)


def test_without_ecn_or_aqm_the_engine_config_says_so(fake_engine, write_spec):
    cfg = world_config(spec(write_spec))
    # Drop-tail, ECN off, and the flow following tcp.ecn (null), written out.
    assert cfg["bottleneck"]["aqm"] is None
    assert cfg["tcp"]["ecn"] is False and cfg["flows"][0]["ecn"] is None
    # [tcp] ecn = false is the default: the same config.
    assert world_config(spec(write_spec, tcp="ecn = false")) == cfg


def test_ecn_switches(fake_engine, write_spec):
    cfg = world_config(spec(write_spec, tcp="ecn = true", flow="ecn = false"))
    assert cfg["tcp"]["ecn"] is True and cfg["flows"][0]["ecn"] is False


def test_codel_defaults_are_linux_and_limit_becomes_the_buffer(fake_engine, write_spec):
    cfg = world_config(spec(write_spec, bottleneck='aqm = { kind = "codel" }'))
    assert cfg["bottleneck"]["aqm"] == {
        "kind": "codel",
        "target_ns": 5_000_000,
        "interval_ns": 100_000_000,
        "ecn": False,
    }
    assert cfg["bottleneck"]["buffer"] == {"packets": 1000}  # sch_codel default limit
    cfg = world_config(spec(write_spec, bottleneck='aqm = { kind = "fq_codel", target = "2ms" }'))
    assert (
        cfg["bottleneck"]["aqm"]["ecn"] is True
        and cfg["bottleneck"]["aqm"]["quantum_bytes"] == 1514
        and cfg["bottleneck"]["aqm"]["flows"] == 1024
    )
    assert cfg["bottleneck"]["aqm"]["target_ns"] == 2_000_000
    assert cfg["bottleneck"]["buffer"] == {"packets": 10240}
    # An explicit buffer is the limit; so is aqm.limit.
    cfg = world_config(spec(write_spec, bottleneck='buffer = "200pkt"\naqm = { kind = "pie" }'))
    assert cfg["bottleneck"]["buffer"] == {"packets": 200}
    cfg = world_config(spec(write_spec, bottleneck='aqm = { kind = "pie", limit = "300pkt" }'))
    assert cfg["bottleneck"]["buffer"] == {"packets": 300}
    assert cfg["bottleneck"]["aqm"] == {
        "kind": "pie",
        "target_ns": 15_000_000,
        "tupdate_ns": 15_000_000,
        "alpha": 2,
        "beta": 20,
        "ecn": False,
    }


def test_red_thresholds_in_bytes_with_tc_defaults(fake_engine, write_spec):
    cfg = world_config(
        spec(write_spec, bottleneck='aqm = { kind = "red", min = "20pkt", ecn = true }')
    )
    # 20 packets of 1500 wire bytes; max defaults to 3 min (tc/q_red.c).
    assert (
        cfg["bottleneck"]["aqm"]["min_bytes"] == 30_000
        and cfg["bottleneck"]["aqm"]["max_bytes"] == 90_000
    )
    assert cfg["bottleneck"]["aqm"]["max_p"] == 0.02 and cfg["bottleneck"]["aqm"]["ecn"] is True


def test_red_without_thresholds_takes_tcs_defaults(fake_engine, write_spec):
    """iproute2 tc/q_red.c: max = limit / 4, min = max / 3. A 100-packet buffer of 1500
    wire bytes is a 150 000-byte limit: max 37 500, min 12 500 bytes."""
    cfg = world_config(spec(write_spec, bottleneck='buffer = "100pkt"\naqm = { kind = "red" }'))
    aqm = cfg["bottleneck"]["aqm"]
    assert (aqm["min_bytes"], aqm["max_bytes"]) == (12_500, 37_500)


def test_step_needs_k(fake_engine, write_spec):
    msg = errors(write_spec, bottleneck='aqm = { kind = "step" }')
    assert "bottleneck.aqm" in msg and "k" in msg


def test_unknown_kind_lists_the_allowed_ones(fake_engine, write_spec):
    msg = errors(write_spec, bottleneck='aqm = { kind = "sfq" }')
    assert "bottleneck.aqm" in msg
    for kind in ("step", "red", "codel", "fq_codel", "pie"):
        assert kind in msg


def test_bad_fields_are_named(fake_engine, write_spec):
    msg = errors(write_spec, bottleneck='aqm = { kind = "codel", targt = "5ms" }')
    assert "targt" in msg and "bottleneck.aqm" in msg
    msg = errors(write_spec, bottleneck='aqm = { kind = "pie", alpha = 40 }')
    assert "bottleneck.aqm" in msg and "alpha" in msg
    msg = errors(
        write_spec, bottleneck='buffer = "100pkt"\naqm = { kind = "codel", limit = "50pkt" }'
    )
    assert "bottleneck.aqm.limit" in msg


@pytest.mark.engine
def test_dctcp_with_step_marking_end_to_end(tmp_path, write_spec):
    import pandas as pd
    from tcplab.cli.app import main

    text = BASE.format(
        bottleneck='aqm = { kind = "step", k = 20, ecn = true }\nbuffer = "500pkt"',
        flow="count = 2",
    ).replace('cc = "cubic"', 'cc = "dctcp"')
    path = write_spec(text)
    out = tmp_path / "res"
    assert main(["run", str(path), "-o", str(out), "-q"]) == 0
    q = pd.read_csv(out / "queue.csv")
    assert {"marks", "sojourn_ms"} <= set(q.columns) and q["marks"].sum() > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["aggregate"]["marked_packets"] == int(q["marks"].sum())
    assert summary["aggregate"]["mean_sojourn_ms"] is not None
    flows = summary["flows"]
    assert all(f["ce_packets"] > 0 and f["ecn_reductions"] > 0 for f in flows)
    # Drop-tail: no marks columns, marked_packets null.
    out2 = tmp_path / "res2"
    path2 = write_spec(BASE.format(bottleneck="", flow=""), "dt.toml")
    assert main(["run", str(path2), "-o", str(out2), "-q"]) == 0
    assert "marks" not in pd.read_csv(out2 / "queue.csv").columns
    agg = json.loads((out2 / "summary.json").read_text())["aggregate"]
    assert agg["marked_packets"] is None and agg["mean_sojourn_ms"] is None


def test_overrides_reach_into_the_aqm_table(fake_engine, write_spec):
    from tcplab.specs.load import apply_overrides, parse_spec

    raw = {
        "experiment": {"duration": "2s"},
        "bottleneck": {"rate": "10Mbps", "aqm": {"kind": "codel"}},
        "flows": [{"cc": "cubic", "rtt": "20ms"}],
    }
    s = parse_spec(apply_overrides(raw, {"bottleneck.aqm.target": "2ms"}))
    assert world_config(s)["bottleneck"]["aqm"]["target_ns"] == 2_000_000
    with pytest.raises(SpecError) as info:
        apply_overrides(raw, {"bottleneck.aqm.k": 10})  # codel has no k
    assert "bottleneck.aqm.k" in str(info.value) and "target" in str(info.value)
