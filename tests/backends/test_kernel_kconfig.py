"""The running kernel's CONFIG_HZ as the kernel backend records it
(backends/kernel/kconfig.py) and the warning when the spec's simulated one differs."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from tcplab.backends.kernel import kconfig


def test_config_hz_is_read_from_a_kernel_config():
    text = b"# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_HZ_PERIODIC=y\n"
    assert kconfig.from_config(text) == 250
    assert kconfig.from_config(b"CONFIG_HZ_1000=y\n") is None  # no CONFIG_HZ= line


def test_the_warning_names_both_values_and_the_fix():
    assert kconfig.hz_warning(1000, 1000) is None
    assert kconfig.hz_warning(1000, None) is None  # unknown: nothing to compare
    w = kconfig.hz_warning(1000, 250)
    assert "CONFIG_HZ=250" in w and "tcp.hz is 1000" in w and "[tcp] hz = 250" in w


def test_the_kernel_config_comes_first(tmp_path, monkeypatch):
    cfg = tmp_path / "config.gz"
    cfg.write_bytes(gzip.compress(b"CONFIG_HZ=300\n"))
    monkeypatch.setattr(kconfig, "config_files", lambda: [tmp_path / "absent", cfg])
    assert kconfig.kernel_hz() == (300, str(cfg))


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/proc/timer_list").is_file(),
    reason="measuring jiffies needs /proc/timer_list (root)",
)
def test_measured_jiffies_agree_with_the_config_here():
    hz, source = kconfig.kernel_hz()
    if hz is None or "measured" in source:
        pytest.skip(f"no kernel config to compare with: {source}")
    assert kconfig.measured_hz() == hz
