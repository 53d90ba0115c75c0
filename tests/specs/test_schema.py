"""The seam between Python and Rust: the engine's exported JSON Schema
(crates/sim/src/schema.rs) is what Python's engine configs, defaults and error paths
follow, and what the engine's output (and the kernel backend's) looks like."""

from __future__ import annotations

import json
import typing

import jsonschema
import pytest
from tcplab.backends import BACKENDS
from tcplab.lowering import world_config
from tcplab.reproduce.catalogue import default_root, load_entry
from tcplab.specs import contract
from tcplab.specs.aqm import CodelAqm, FqCodelAqm, PieAqm, RedAqm
from tcplab.specs.load import parse_spec
from tcplab.specs.model import Experiment, Tcp

QUICK = {
    "experiment": {"duration": "2s", "sample_interval": "100ms"},
    "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
    "flows": [{"cc": "bbr", "rtt": "20ms"}, {"cc": "cubic", "rtt": "40ms"}],
}


@pytest.mark.engine
def test_the_packaged_schema_is_the_engines_export():
    from tcplab.engine import engine

    exported = json.loads(engine().schema())
    assert contract.schema() == exported, (
        "python/tcplab/specs/engine_schema.json is stale: regenerate it with "
        "python -c 'import json, tcplab._engine as e; print(json.dumps(json.loads(e.schema()), "
        "indent=1, sort_keys=True))' > python/tcplab/specs/engine_schema.json"
    )


def test_tcp_defaults_and_bounds_are_the_engines():
    tcp = Tcp()
    names = {
        "mss": "mss_bytes",
        "header": "header_bytes",
        "delayed_ack": "delayed_ack",
        "initial_cwnd": "initial_cwnd",
        "rack": "rack",
        "sack_compression": "sack_compression",
        "rto_min": "rto_min_ns",
        "tlp": "tlp",
        "frto": "frto",
        "ecn": "ecn",
        "receive_buffer": "receive_buffer",
    }
    for ours, engine_name in names.items():
        assert getattr(tcp, ours) == contract.default("TcpConfig", engine_name), ours
    # Linux's defaults, by hand: 1448-byte MSS (1500 MTU with timestamps), IW10, 200 ms.
    assert (tcp.mss, tcp.header, tcp.initial_cwnd, tcp.rto_min) == (1448, 52, 10, 200_000_000)
    # The spec may not allow what the engine refuses.
    mss = contract.field("TcpConfig", "mss_bytes")
    le = next(m.le for m in Tcp.model_fields["mss"].metadata if hasattr(m, "le"))
    assert le == mss["maximum"] == 65_495


def test_qdisc_defaults_are_the_kernels_once():
    # Hand-copied from the kernel sources the Rust modules cite: sch_codel.c
    # codel_params_init (5 ms, 100 ms), fq_codel_init (ECN on, quantum = psched_mtu 1514,
    # 1024 flows), pie_params_init (15 ms target and tupdate, alpha 2, beta 20),
    # tc/q_red.c (probability 0.02, avpkt 1000).
    codel = CodelAqm(kind="codel")
    assert (codel.target, codel.interval, codel.ecn) == (5_000_000, 100_000_000, False)
    fq = FqCodelAqm(kind="fq_codel")
    assert (fq.target, fq.interval, fq.quantum, fq.flows, fq.ecn) == (
        5_000_000,
        100_000_000,
        1514,
        1024,
        True,
    )
    pie = PieAqm(kind="pie")
    assert (pie.target, pie.tupdate, pie.alpha, pie.beta) == (15_000_000, 15_000_000, 2, 20)
    red = RedAqm(kind="red")  # thresholds: tc's defaults, set on resolve
    assert (red.probability, red.avpkt) == (0.02, 1000)


def test_every_catalogue_config_follows_the_schema():
    validator = jsonschema.Draft202012Validator(contract.schema()["world_config"])
    checked = 0
    for path in sorted(default_root().glob("*/*.toml")):
        entry = load_entry(path)
        if not entry.raw:
            continue
        cfg = world_config(parse_spec(entry.raw))
        errors = sorted(validator.iter_errors(cfg), key=str)
        assert not errors, f"{path.name}: {errors[0].message} at {list(errors[0].path)}"
        checked += 1
    assert checked >= 30


@pytest.mark.engine
def test_the_engines_output_follows_the_schema():
    from tcplab.backends.sim import run_config

    raw = run_config(world_config(parse_spec(QUICK)))
    jsonschema.validate(raw, contract.schema()["run_output"])
    assert list(raw["series"])[:3] == ["time_ns", "flow", "cwnd_pkts"]


def test_the_specs_backends_are_the_registrys():
    allowed = typing.get_args(typing.get_args(Experiment.model_fields["backend"].annotation)[0])
    assert set(allowed) == set(BACKENDS)
