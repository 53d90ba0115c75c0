"""The shipped examples' compiled objects, for machines without clang.

``bpf:cubic`` and the other shipped examples (``tcplab/data/bpf/examples``) are sources;
tcplab compiles them with clang like any user's program (tcplab.bpf). The wheel also
carries each one compiled (``tcplab/data/bpf/objects/NAME.bpf.o``, made when the wheel is
built by ``scripts/build_bpf_objects.py``: clang against libbpf's headers and the
vmlinux.h tcplab ships, so each object is CO-RE and relocates against whichever kernel,
or the simulator, loads it), with ``objects.json`` recording the sha256 of every input
(the source, tcplab's header, the shipped vmlinux.h). Where clang or libbpf's headers are
missing, an example whose inputs still have those bytes runs from its shipped object;
anything else (an edited copy, a user's own program, flags of a flow's ``bpf`` table)
needs clang as before.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "bpf"
OBJECTS = DATA / "objects"
MANIFEST = OBJECTS / "objects.json"
INPUTS = (DATA / "include" / "tcplab_cc.h", DATA / "vmlinux" / "vmlinux.h.gz")
"""What an example's object depends on besides its source (the examples include only
tcplab_cc.h, vmlinux.h and libbpf's headers; libbpf's come from the machine that built
the wheel, and their version is in ``objects.json``)."""


def inputs_sha256(source: bytes) -> dict[str, str]:
    """The sha256 of an example's source and of every shipped file it includes."""
    out = {"source": hashlib.sha256(source).hexdigest()}
    for path in INPUTS:
        out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def object_for(source: Path, data: bytes) -> bytes | None:
    """The shipped object of ``source`` (whose bytes are ``data``) if it is a shipped
    example with the inputs the object was built from, else None."""
    try:
        name = source.resolve().relative_to((DATA / "examples").resolve()).name
        entry = json.loads(MANIFEST.read_text())["objects"][name]
        obj = (OBJECTS / entry["object"]).read_bytes()
    except (ValueError, OSError, KeyError, TypeError):
        return None
    if entry.get("inputs") != inputs_sha256(data):
        return None
    if hashlib.sha256(obj).hexdigest() != entry.get("object_sha256"):
        return None  # a damaged install: compile (or say clang is missing) instead
    return obj
