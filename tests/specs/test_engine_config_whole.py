"""The engine config is written whole (tcplab.lowering.world_config): every key of every
engine type the config holds, defaults included, for specs that use each part of it
(AQM, ECN, traces, policers, named links and paths, on/off, sources, probes), so what
the engine ran can be read off world.json. The keys expected are the engine's own: the
properties of its exported schema (python/tcplab/specs/engine_schema.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tcplab.lowering import world_config
from tcplab.specs.contract import schema
from tcplab.specs.load import load_spec, parse_spec, tomllib

ROOT = Path(__file__).resolve().parents[2]
SPECS = [
    ROOT / "experiments" / "quickstart.toml",
    *sorted((ROOT / "experiments" / "kernel-spec").glob("k0*.toml")),
]
SOURCES_AND_PROBES = """
[experiment]
duration = "1s"
[bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = "1bdp"
reverse = { buffer = "10pkt", loss = 0.01 }
aqm = { kind = "red", min = "5pkt", max = "15pkt" }
[[sources]]
rate = "2Mbps"
rtt = "40ms"
onoff = { on = "100ms", off = "100ms" }
[[probes]]
name = "ping"
interval = "100ms"
rtt = "20ms"
[[flows]]
cc = "cubic"
rtt = "40ms"
ecn = true
"""


def _missing(node: Any, sch: dict[str, Any], at: str, defs: dict[str, Any]) -> list[str]:
    """Keys of the engine's schema ``sch`` that ``node`` (a part of the config) lacks,
    following the schema's references into every nested engine type."""
    if node is None or not isinstance(sch, dict):  # null, or a schema of `true` (any value)
        return []
    if "$ref" in sch:
        return _missing(node, defs[sch["$ref"].rsplit("/", 1)[1]], at, defs)
    for key in ("anyOf", "oneOf"):
        if key in sch:  # an option (a type or null) or an enum (AqmConfig, QueueLimit)
            alts = [a for a in sch[key] if a.get("type") != "null"]
            if isinstance(node, dict):  # the variant with this kind, or with these keys
                alts = [
                    a
                    for a in alts
                    if "$ref" in a
                    or (
                        set(node) <= set(a.get("properties", {}))
                        and a["properties"].get("kind", {}).get("const") == node.get("kind")
                    )
                ]
            return _missing(node, alts[0], at, defs) if alts else []
    out: list[str] = []
    if isinstance(node, list) and "items" in sch:
        for k, item in enumerate(node):
            out += _missing(item, sch["items"], f"{at}[{k}]", defs)
    if isinstance(node, dict) and "properties" in sch:
        props = sch["properties"]
        out += [f"{at}.{k}" for k in props if k not in node]
        for k, v in node.items():
            if k in props:
                out += _missing(v, props[k], f"{at}.{k}", defs)
    elif isinstance(node, dict) and isinstance(sch.get("additionalProperties"), dict):
        for k, v in node.items():  # shaping: a map by link name
            out += _missing(v, sch["additionalProperties"], f"{at}.{k}", defs)
    return out


def _check(cfg: dict[str, Any]) -> list[str]:
    world = schema()["world_config"]
    return _missing(cfg, world, "config", world["$defs"])


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_engine_key_is_written(path):
    cfg = world_config(load_spec(path))
    assert _check(cfg) == []


def test_every_engine_key_is_written_with_sources_probes_red_and_a_reverse_link():
    cfg = world_config(parse_spec(tomllib.loads(SOURCES_AND_PROBES)))
    assert cfg["sources"] and cfg["probes"] and cfg["bottleneck"]["aqm"]["kind"] == "red"
    assert _check(cfg) == []


def test_the_check_can_fail():
    """A key left out anywhere (a flow's, a link's, a qdisc's, a source's, the tcp
    table's, the top level's) is named."""
    cfg = world_config(parse_spec(tomllib.loads(SOURCES_AND_PROBES)))
    del cfg["flows"][0]["ecn"]
    del cfg["flows"][0]["receiver_access"]["reorder_gap"]
    del cfg["bottleneck"]["aqm"]["burst_pkts"]
    del cfg["sources"][0]["onoff"]
    del cfg["tcp"]["hz"]
    del cfg["capture"]
    assert sorted(_check(cfg)) == [
        "config.bottleneck.aqm.burst_pkts",
        "config.capture",
        "config.flows[0].ecn",
        "config.flows[0].receiver_access.reorder_gap",
        "config.sources[0].onoff",
        "config.tcp.hz",
    ]
