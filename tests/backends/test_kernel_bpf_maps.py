"""bpf_maps.json on the kernel backend: tcplab-bpfload reads every map of the objects it
registered when the run ends, before it unregisters them, and the run directory holds
them as the simulator's (tests/runs/test_bpf_maps.py, whose checks this reuses). Needs
root, the kernel backend, the loader, BTF and clang; skipped elsewhere with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

from kernel_skips import NEEDS_BPF_ON_KERNEL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runs"))
from test_bpf_maps import check_counting_reno, spec  # noqa: E402

pytestmark = NEEDS_BPF_ON_KERNEL


def test_the_kernels_maps_are_written_at_the_end(tmp_path):
    import tcplab

    r = tcplab.run(spec("kernel"), out=tmp_path / "run", report=False)
    # Each flow's receiver accepts its connection on a Reno socket, not the program (the
    # program does not need ECN: run.py receiver_cc), so two inits for two flows, as in
    # the simulator (issue 39 measured four when the receivers ran it too). The maps are
    # read at the run's end, so the ssthresh calls of the closing sockets' timeouts after
    # it are not counted (calls <= retransmissions).
    check_counting_reno(tmp_path / "run", r.summary_json, sockets=2)
