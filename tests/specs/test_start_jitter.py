"""`[tcp] start_jitter`: the hosts' start-up variation reaches the engine in every config
(its default moved every result, so every digest moves with it), "0s" turns it off, and
a value outside [0s, 1s] is refused naming the field."""

import pytest
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.specs.load import parse_spec

SPEC = {
    "experiment": {"duration": "2s"},
    "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "rtt": "40ms"}],
}


def _with_tcp(**tcp) -> dict:
    return {**SPEC, "tcp": tcp}


def test_the_default_is_the_engines_and_is_always_in_the_engine_config():
    spec = parse_spec(SPEC)
    # 0.6 ms: crates/sim/src/start_jitter.rs DEFAULT_START_JITTER_NS.
    assert spec.tcp.start_jitter == 600_000
    assert world_config(spec)["tcp"]["start_jitter_ns"] == 600_000


@pytest.mark.parametrize(("given", "ns"), [("0s", 0), ("2ms", 2_000_000), ("1s", 10**9)])
def test_a_given_jitter_reaches_the_engine(given, ns):
    assert world_config(parse_spec(_with_tcp(start_jitter=given)))["tcp"]["start_jitter_ns"] == ns


@pytest.mark.parametrize("given", ["1.5s", "-1ms", "fast"])
def test_other_values_are_refused_naming_the_field(given):
    with pytest.raises(SpecError) as info:
        parse_spec(_with_tcp(start_jitter=given))
    assert "tcp.start_jitter" in str(info.value), str(info.value)
