"""Compiles the shipped BPF examples into the objects the wheel carries, for machines
without clang (tcplab/bpf_shipped.py says how they are used).

    python scripts/build_bpf_objects.py          # -> python/tcplab/data/bpf/objects/

Each ``tcplab/data/bpf/examples/NAME.bpf.c`` is compiled as tcplab.bpf compiles a flow's
source (its clang flags and tcplab's header), but always against the vmlinux.h tcplab
ships, never this machine's: the objects are CO-RE, relocated against whichever kernel or
simulator loads them, and the same on every machine that builds the wheel with the same
clang. ``objects.json`` records each object's sha256, the sha256 of its inputs, and
clang's version. scripts/build_wheel.sh runs this before maturin and removes the objects
after, so a checkout never runs stale ones.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from tcplab import bpf, bpf_build, bpf_shipped  # noqa: E402


def build(out: Path) -> dict[str, dict[str, str]]:
    out.mkdir(parents=True, exist_ok=True)
    flags = [*bpf.CFLAGS, "-I", str(bpf.HEADERS), "-I", str(bpf.shipped_vmlinux_dir())]
    objects: dict[str, dict[str, str]] = {}
    for name in bpf.example_names():
        source = bpf.EXAMPLES / f"{name}.bpf.c"
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "prog.o"
            subprocess.run(
                [bpf_build._clang(), *flags, "-c", str(source), "-o", str(obj)],
                check=True,
                timeout=bpf.CLANG_TIMEOUT_S,
            )
            data = obj.read_bytes()
        (out / f"{name}.bpf.o").write_bytes(data)
        objects[source.name] = {
            "object": f"{name}.bpf.o",
            "object_sha256": hashlib.sha256(data).hexdigest(),
            "inputs": bpf_shipped.inputs_sha256(source.read_bytes()),
        }
    manifest = {"clang": bpf_build._clang_version(), "objects": objects}
    (out / bpf_shipped.MANIFEST.name).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return objects


if __name__ == "__main__":
    built = build(bpf_shipped.OBJECTS)
    print(f"built {len(built)} objects in {bpf_shipped.OBJECTS}: {', '.join(sorted(built))}")
