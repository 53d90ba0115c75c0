"""A choice parameter (bbr's ``kernel``) takes its label as a flow parameter as well as
its value; the labels come from the engine's registry, and a wrong one is refused naming
the field and the labels."""

import pytest
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.specs.algorithms import registry
from tcplab.specs.load import parse_spec
from tcplab.specs.model import kernel_releases


def _spec(params: dict) -> dict:
    return {
        "experiment": {"duration": "1s"},
        "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"},
        "flows": [{"cc": "bbr", "rtt": "40ms", "params": params}],
    }


def test_the_releases_are_the_engines_choices():
    assert kernel_releases() == {"4.9": 409, "4.14": 414, "4.17": 417, "6.18": 618}
    assert registry()["bbr"].param("kernel").kind == "choice"


@pytest.mark.parametrize("value", ["4.9", 409])
def test_label_or_value(value):
    params = world_config(parse_spec(_spec({"kernel": value})))["flows"][0]["params"]
    assert params == {"kernel": value}


def test_an_unknown_label_names_the_field_and_the_labels():
    with pytest.raises(SpecError) as info:
        parse_spec(_spec({"kernel": "5.4"}))
    msg = str(info.value)
    assert "flows[0].params.kernel" in msg and "'4.9', '4.14', '4.17', '6.18'" in msg, msg
