"""Walking the algorithm names of a spec as read from TOML: every flow's ``cc`` and every
swept ``...cc`` list. The prefixes that name a file (``bpf:``, ``policy:``) make their
paths absolute against the spec file's directory through it, so that a spec means the
same from any working directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def map_cc(
    raw: Any,
    fn: Callable[[str], str],
    visit: Callable[[str, Any], bool] | None = None,
) -> Any:
    """``raw`` with ``fn`` applied to every ``cc`` string (a flow's, or each of a swept
    ``...cc`` list), in place; returned for chaining. ``visit(key, value)``, if given, sees
    every other key first and returns True when it has handled that value itself."""
    if isinstance(raw, dict):
        for k, v in raw.items():
            if visit is not None and visit(k, v):
                continue
            if k == "cc" or k.endswith(".cc"):
                if isinstance(v, str):
                    raw[k] = fn(v)
                elif isinstance(v, list):
                    raw[k] = [fn(x) if isinstance(x, str) else x for x in v]
            else:
                map_cc(v, fn, visit)
    elif isinstance(raw, list):
        for v in raw:
            map_cc(v, fn, visit)
    return raw
