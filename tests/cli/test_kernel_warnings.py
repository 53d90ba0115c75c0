"""The kernel's CONFIG_HZ warning is said where it matters (issue 45): a spec that pins
``tcp.hz``, or a run on both backends; a kernel run alone of a spec that leaves tcp.hz at
its default keeps it in summary.json without printing it on every run."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from tcplab.backends.kernel import kconfig
from tcplab.cli import commands
from tcplab.specs.load import parse_spec

SPEC = {
    "experiment": {"duration": "2s"},
    "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "rtt": "40ms"}],
}
HZ = kconfig.hz_warning(1000, 250)
OTHER = "the link emulator could not keep up: ..."


def _spec(hz: int | None = None):
    raw = {**SPEC, **({"tcp": {"hz": hz}} if hz is not None else {})}
    return parse_spec(raw, check_algorithms=False)


def test_the_prefix_is_the_warnings_own_start():
    assert HZ is not None and HZ.startswith(commands.HZ_WARNING_PREFIX)


@pytest.mark.parametrize(
    "backend, hz, said",
    [
        ("kernel", None, False),  # the kernel's own clock alone: nothing to compare
        (None, None, False),  # the spec's backend (kernel), tcp.hz left at its default
        ("kernel", 1000, True),  # the spec asks for HZ = 1000, the kernel has 250
        ("sim,kernel", None, True),  # the simulated half ticks at 1000, the kernel at 250
    ],
)
def test_the_hz_warning_is_said_where_the_clocks_meet(backend, hz, said):
    args = SimpleNamespace(backend=backend)
    assert commands._worth_saying(HZ, args, _spec(hz)) is said
    assert commands._worth_saying(OTHER, args, _spec(hz)) is True  # every other one is said
