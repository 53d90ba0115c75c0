"""A spec may name a trace tcplab ships by its bare name (as tcplab.gym.Scenarios may),
so a spec outside a checkout can use them; a file of that name beside the spec wins, and
a name that is neither is refused naming the field."""

from __future__ import annotations

import pytest
from tcplab.errors import SpecError
from tcplab.specs.load import as_spec, load_spec
from tcplab.specs.traces import SHIPPED_TRACES

SPEC = """
[experiment]
duration = "2s"

[bottleneck]
rate = {{ trace = "{name}" }}

[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def test_a_bare_shipped_name_in_a_spec_file_is_the_shipped_trace(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(name="constant-12mbps"))
    spec = load_spec(p)
    assert spec.bottleneck.rate.path == str((SHIPPED_TRACES / "constant-12mbps").resolve())


def test_a_file_beside_the_spec_wins_over_a_shipped_trace(tmp_path):
    # 1000 opportunities in 1000 ms: 12 Mbit/s, a file of the shipped trace's name.
    (tmp_path / "constant-12mbps").write_text("\n".join(["1000"] * 1000) + "\n")
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(name="constant-12mbps"))
    assert load_spec(p).bottleneck.rate.path == str((tmp_path / "constant-12mbps").resolve())


def test_a_dict_spec_may_name_a_shipped_trace():
    spec = as_spec(
        {
            "experiment": {"duration": "2s"},
            "bottleneck": {"rate": {"trace": "square-24-6mbps-5s", "scale": 0.5}},
            "flows": [{"cc": "cubic", "rtt": "40ms"}],
        }
    )
    assert spec.bottleneck.rate.path.endswith("square-24-6mbps-5s")


def test_a_name_that_is_neither_is_refused_naming_the_field(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(name="no-such-trace"))
    with pytest.raises(SpecError, match=r"bottleneck\.rate.*no-such-trace: no such trace file"):
        load_spec(p)
