"""What we write we read: every accepted spec, resolved and written as a run's
``spec.toml``, reads back as a valid spec that gives the same engine config. Generated
specs include names with any characters (control characters, DEL, quotes, backslashes,
non-ASCII), which once produced unreadable files."""

import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcplab.errors import SpecError
from tcplab.lowering import resolve, world_config
from tcplab.specs.load import parse_spec
from tcplab.storage.directory import spec_toml

RATES = st.sampled_from(["1Mbps", "10Mbps", "20.5Mbps", "1Gbps", "640kbps"])
TIMES = st.sampled_from(["0s", "1ms", "2ms", "5ms", "12.5ms", "40ms"])
BUFFERS = st.sampled_from(["0.5bdp", "1bdp", "2.25bdp", "17pkt", "30000B", "64KiB", "unlimited"])
TEXT = st.text(max_size=30)


@st.composite
def specs(draw):
    flow = {
        "cc": draw(st.sampled_from(["reno", "cubic", "bbr"])),
        "rtt": draw(st.sampled_from(["10ms", "40ms", "100ms"])),
        "count": draw(st.integers(1, 3)),
    }
    if draw(st.booleans()):
        flow["stagger"] = "100ms"
    if draw(st.booleans()):
        flow["size"] = draw(st.sampled_from(["10000000B", "1000pkt", "1448B"]))
    if flow["cc"] == "cubic" and draw(st.booleans()):
        flow["params"] = {"beta": draw(st.floats(0.1, 0.9))}
    raw = {
        "experiment": {
            "name": draw(TEXT),
            "description": draw(TEXT),
            "duration": "2s",
            "seed": draw(st.integers(0, 2**63 - 1)),
            "sample_interval": draw(st.sampled_from(["10ms", "100ms", "0.25s"])),
        },
        "tcp": {"mss": draw(st.integers(64, 9000)), "delayed_ack": draw(st.booleans())},
        "bottleneck": {
            "rate": draw(RATES),
            "delay": draw(TIMES),
            "buffer": draw(BUFFERS),
            "loss": draw(st.sampled_from([0, 0.0, 0.001, 0.25])),
        },
        "flows": [flow],
    }
    if draw(st.booleans()):
        raw["events"] = [{"at": "1s", "rate": draw(RATES)}]
    return raw


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=specs())
def test_every_accepted_spec_reads_back_as_the_same_run(fake_engine, raw):
    try:
        spec = resolve(parse_spec(raw))
    except SpecError:
        return  # refused specs are the fuzz tests' business
    text = spec_toml(spec)
    again = resolve(parse_spec(tomllib.loads(text)))
    assert again.experiment.name == spec.experiment.name
    assert again.experiment.description == spec.experiment.description
    assert world_config(again) == world_config(spec)


def test_a_name_with_delete_reads_back(fake_engine):
    raw = {
        "experiment": {"name": "a\u007fb", "duration": "1s"},
        "bottleneck": {"rate": "10Mbps"},
        "flows": [{"cc": "reno", "rtt": "10ms"}],
    }
    text = spec_toml(resolve(parse_spec(raw)))
    assert '"a\\u007Fb"' in text
    assert tomllib.loads(text)["experiment"]["name"] == "a\u007fb"
