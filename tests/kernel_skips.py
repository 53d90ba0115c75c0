"""When a test of BPF on the kernel backend cannot run here, and why: the kernel backend's
requirements (root, namespaces, tun, ip), tcplab-bpfload, clang and libbpf's headers. One
place for the reason, so every such test file skips with the same words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tcplab import bpf_loader
from tcplab.backends.kernel import requirements


def bpf_on_kernel_missing() -> str:
    """What is missing for BPF on the kernel backend, or "" when nothing is."""
    why = "; ".join(r.detail for r in requirements.missing()) or bpf_loader.available()
    if not why and not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        why = "clang or libbpf's headers missing"
    return why


_WHY = bpf_on_kernel_missing()
NEEDS_BPF_ON_KERNEL = [
    pytest.mark.engine,
    pytest.mark.skipif(bool(_WHY), reason=f"BPF on the kernel backend unavailable: {_WHY}"),
]

# A kernel trajectory kept as a non-strict xfail measures the kernel's scatter; it cannot
# fail, so it is no gate and costs CI ~20 s a run. Such tests run when asked
# (TCPLAB_KERNEL_MEASUREMENTS=1 python -m pytest tests/backends), their reason says what
# was measured, and docs/FIDELITY*.md judge the same comparisons over seeds.
MEASUREMENT = pytest.mark.skipif(
    not os.environ.get("TCPLAB_KERNEL_MEASUREMENTS"),
    reason="a measurement of the kernel's scatter (non-strict xfail, cannot fail): run it "
    "with TCPLAB_KERNEL_MEASUREMENTS=1",
)
