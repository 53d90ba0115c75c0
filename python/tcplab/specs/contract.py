"""The engine's contract (``crates/sim/src/schema.rs``) as the spec model reads it.

``engine_schema.json`` beside this file is the JSON Schema exported from the Rust types
``WorldConfig`` and ``RunOutput`` (schemars); ``tests/specs/test_schema.py`` fails when it is not
the compiled engine's own export. The spec model takes the engine's defaults from it
(AQM and TCP settings), so a default lives in one place: the Rust type that uses it.
Reading the file, not the engine, keeps ``import tcplab.specs`` free of the extension.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).with_name("engine_schema.json")
_UNIT_SUFFIX = re.compile(r"_(ns|bps|bytes|pkts)$")


@functools.lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """``{"world_config": <JSON Schema>, "run_output": <JSON Schema>}``."""
    return json.loads(SCHEMA_FILE.read_text())


def definition(name: str, kind: str | None = None) -> dict[str, Any]:
    """The schema of config type ``name`` (``TcpConfig``); for a tagged enum such as
    ``AqmConfig``, the variant whose ``kind`` is ``kind``."""
    node = schema()["world_config"]["$defs"][name]
    if kind is None:
        return node
    for alt in node.get("oneOf", []):
        if alt.get("properties", {}).get("kind", {}).get("const") == kind:
            return alt
    raise KeyError(f"{name} has no variant {kind!r}")


def field(name: str, field_name: str, kind: str | None = None) -> dict[str, Any]:
    """The schema of one field: its ``default``, ``minimum``, ``maximum``, ``description``."""
    return definition(name, kind)["properties"][field_name]


def default(name: str, field_name: str, kind: str | None = None) -> Any:
    """The engine's default of a field (``default("TcpConfig", "mss_bytes")`` = 1448)."""
    return field(name, field_name, kind)["default"]


def spec_name(engine_field: str, prop: dict[str, Any] | None = None) -> str:
    """The spec's name of an engine field: its ``x-spec`` name if the schema gives one,
    else the field's name less its unit suffix (``target_ns`` is ``target``)."""
    return (prop or {}).get("x-spec") or _UNIT_SUFFIX.sub("", engine_field)
