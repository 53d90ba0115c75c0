"""The compiled engine, ``tcplab._engine`` (crates/py), and the contract it exports.

Every module that calls into Rust goes through :func:`engine`, so a missing build is one
clear message; :func:`engine_schema` is the engine's JSON Schema of its config and output
(crates/sim/src/schema.rs).
"""

from __future__ import annotations

import functools
import json
from typing import Any


def engine() -> Any:
    """The compiled engine module ``tcplab._engine``.

    Raises
    ------
    RuntimeError
        If the extension is not built.
    """
    try:
        from tcplab import _engine  # type: ignore[attr-defined]
    except ImportError as exc:  # pragma: no cover - depends on the build
        raise RuntimeError(
            "the tcplab engine (tcplab._engine) is not built; install tcplab with 'pip install .' "
            f"from the repository root ({exc})"
        ) from None
    return _engine


@functools.lru_cache(maxsize=1)
def engine_schema() -> dict[str, Any]:
    """The engine's contract as JSON Schema: ``{"world_config", "run_output"}``, exported
    from the Rust types (``crates/sim/src/schema.rs``)."""
    return json.loads(engine().schema())
