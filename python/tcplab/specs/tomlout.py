"""A small TOML writer for specs (tomllib reads only). It handles what a spec holds:
tables, arrays of tables, strings, numbers, booleans, lists and inline tables.

Why not tomli-w (evaluated at version 1.2.0): the resolved ``spec.toml`` of
every run directory, ``tcplab validate`` and ``tcplab import-tum`` print specs for people
to read and edit, and they should look like the specs they write and the README shows.
tomli-w writes every array of tables inline (``flows = [{ cc = "bbr", rtt = "20ms" },
...]`` instead of ``[[flows]]`` blocks, with no option to choose), an empty inline table
(``windows = {}``) as an empty ``[experiment.windows]`` section, and every list over
several lines; it has no header comment. Bending its output back would be more code than
this writer, whose correctness (every value reads back equal through tomllib, strings with
any control character included) tests/specs/test_roundtrip.py and tests/cli/test_fuzz.py check."""

from __future__ import annotations

import math
from typing import Any


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }" if v else "{}"
        )
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


# TOML basic strings may not hold U+0000-U+0008, U+000A-U+001F or U+007F unescaped
# (toml.io v1.0.0, "String"); JSON's escaping leaves U+007F raw, so escape it ourselves.
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _string(s: str) -> str:
    """A TOML basic string that reads back as ``s``."""
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else _string(k)


def dumps(doc: dict[str, Any], header: str = "") -> str:
    """TOML text for ``doc``: top-level dicts become ``[tables]``, lists of dicts
    ``[[arrays]]``; nested dicts inside them are written inline."""
    lines = [f"# {line}" for line in header.splitlines()]
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict) and not _is_table_list(v)}
    for k, v in scalars.items():
        lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines += ["", f"[{_key(k)}]"] + [f"{_key(a)} = {_value(b)}" for a, b in v.items()]
        elif _is_table_list(v):
            for item in v:
                lines += ["", f"[[{_key(k)}]]"] + [
                    f"{_key(a)} = {_value(b)}" for a, b in item.items()
                ]
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table_list(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, dict) for x in v)
