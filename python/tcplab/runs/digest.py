"""A run's digest: the name of its stored directory (``DIR/runs/<digest>/``), under which
a sweep or the catalogue reuses the run instead of computing it again, so it must change
with everything the run's files depend on and with nothing else.

Scheme 2 (:data:`DIGEST_SCHEME`) is the sha256 of the canonical JSON (sorted keys, no
spaces) of::

    {"scheme": 2,
     "tcplab": the version, which stands for the code (engine, lowering, analysis),
     "backend": the backend that runs it ("sim", "kernel"),
     "spec": the resolved spec (tcplab.lowering.resolve) as pydantic dumps it: every
             field, defaults filled, null for an option not set; the seed; the analysis
             settings; experiment.backend as the backend that runs,
     "files": {where: sha256} of every file the run reads beyond the spec}

``files`` names, by the spec field that names the file: each flow group's BPF object
(``flows[i].cc``: the compiled object the engine loads, so its source, headers, compile
options, clang and vmlinux.h are all in it), each trained policy (``flows[i].cc``: the
file's bytes, JSON or ONNX), each preset file (``flows[i].cc``: the module's bytes, not
what it imports) and each trace (``bottleneck.rate`` ...: its delivery
opportunities as read when the spec was loaded, one per line, which is what the run
uses). A workload's CDF file needs no entry: resolving draws its flows, and the
resolved spec lists them.

The engine config (tcplab.lowering.world_config) is not hashed: it is a function of the
above, so it can be written whole without moving a digest. Two specs that differ only in
a default written out or left out resolve to the same spec and get the same digest (they
are the same run); a field left unset (null) and the same value written are kept apart
where the spec model keeps them apart (``flows[i].ecn``, the netem fields): a cache miss,
never a wrong hit.

Scheme 1 (tcplab up to 0.10.0, unversioned): sha256 of "tcplab VERSION", the engine
config's canonical JSON, the resolved spec's ``to_dict`` JSON and the backend's tag
(nothing for the simulator); its engine config left out default-valued keys so that
digests would not move, which scheme 2 makes unnecessary.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from tcplab import bpf, policy, preset_file
from tcplab.backends import backend_of
from tcplab.errors import SpecError
from tcplab.lowering import resolve
from tcplab.specs.files import read_bounded
from tcplab.specs.model import Spec
from tcplab.specs.traces import TraceRate
from tcplab.version import __version__

DIGEST_SCHEME = 2
"""Raise it whenever what a digest is made of changes (and say so in the module doc)."""


def run_digest(spec: Spec) -> str:
    """The run digest of ``spec`` (resolved here if it is not yet), scheme
    :data:`DIGEST_SCHEME`: 64 hex digits.

    Raises
    ------
    SpecError
        A policy file the spec names cannot be read (naming ``flows[i].cc``).
    tcplab.bpf.BpfBuildError
        A BPF program does not compile.
    """
    return hashlib.sha256(canonical(digest_document(spec)).encode()).hexdigest()


def digest_document(spec: Spec) -> dict[str, Any]:
    """What :func:`run_digest` hashes (see the module doc), for reading and testing."""
    s = resolve(spec)
    backend = backend_of(s).name
    dumped = s.model_dump(mode="json")
    dumped["experiment"]["backend"] = backend  # absent and "sim" are the same run
    return {
        "scheme": DIGEST_SCHEME,
        "tcplab": __version__,
        "backend": backend,
        "spec": dumped,
        "files": files_read(s),
    }


def canonical(doc: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, no NaN."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


def files_read(s: Spec) -> dict[str, str]:
    """``{spec field: sha256}`` of every file a run of the resolved spec ``s`` reads
    beyond the spec (module doc)."""
    out: dict[str, str] = {}
    for i, f in enumerate(s.flows):
        at = f"flows[{i}].cc"
        if bpf.is_bpf(f.cc):
            build = f.bpf.build() if f.bpf is not None else bpf.NO_BUILD
            out[at] = _sha256(bpf.program(f.cc, build).object_path.read_bytes())
        elif (kind := _file_kind(f.cc)) is not None:  # a policy's or a preset's file
            try:
                out[at] = _sha256(read_bounded(kind.path(f.cc), kind.MAX_BYTES))
            except (OSError, ValueError) as exc:
                raise SpecError([(at, f"{kind.path(f.cc)}: cannot be read ({exc})")]) from None
    for at, trace in _traces(s, ""):
        text = "\n".join(map(str, trace.opportunities_ms)) + "\n"
        out[at] = _sha256(text.encode())
    return out


def _file_kind(cc: str) -> Any:
    """The module (tcplab.policy or tcplab.preset_file) whose ``path`` and ``MAX_BYTES``
    name the file a ``policy:`` or ``preset:`` cc reads, or None."""
    if policy.is_policy(cc):
        return policy
    return preset_file if preset_file.is_preset(cc) else None


def _traces(node: Any, at: str) -> list[tuple[str, TraceRate]]:
    """Every trace-driven rate under ``node`` with its spec path (``flows[0].access.rate``)."""
    if isinstance(node, TraceRate):
        return [(at, node)]
    if isinstance(node, BaseModel):
        return [
            hit
            for name in type(node).model_fields
            for hit in _traces(getattr(node, name), f"{at}.{name}" if at else name)
        ]
    if isinstance(node, list | tuple):
        return [hit for k, v in enumerate(node) for hit in _traces(v, f"{at}[{k}]")]
    return []


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
