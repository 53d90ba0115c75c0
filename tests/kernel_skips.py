"""When a test of BPF on the kernel backend cannot run here, and why: the kernel backend's
requirements (root, namespaces, tun, ip), tcplab-bpfload, clang and libbpf's headers. One
place for the reason, so every such test file skips with the same words."""

from __future__ import annotations

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
