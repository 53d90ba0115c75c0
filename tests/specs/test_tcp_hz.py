"""`[tcp] hz`: the simulated CONFIG_HZ reaches the engine, and a value no kernel is built
with is refused naming the field."""

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


def test_hz_defaults_to_1000_the_engines_default():
    spec = parse_spec(SPEC)
    assert spec.tcp.hz == 1000
    assert world_config(spec)["tcp"]["hz"] == 1000


@pytest.mark.parametrize("hz", [100, 250, 300])
def test_a_kernel_hz_reaches_the_engine(hz):
    assert world_config(parse_spec(_with_tcp(hz=hz)))["tcp"]["hz"] == hz


@pytest.mark.parametrize("hz", [200, 0, 1024])
def test_other_values_are_refused_naming_the_field(hz):
    with pytest.raises(SpecError) as info:
        parse_spec(_with_tcp(hz=hz))
    msg = str(info.value)
    assert "tcp.hz" in msg and "100, 250, 300, 1000" in msg, msg
