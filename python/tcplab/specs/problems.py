"""pydantic's validation errors as the spec's own field paths and plain messages: the
discriminated union's tag and union members dropped from the path, an unknown field
answered with the fields allowed there, one message per path."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)

from tcplab.specs.aqm import KINDS as AQM_KINDS
from tcplab.specs.aqm import model_of as aqm_model_of
from tcplab.specs.model import (
    Spec,
)
from tcplab.specs.paths import _unwrap, format_path


def _model_at(loc: tuple) -> type[BaseModel] | None:
    tp: Any = Spec
    for seg in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if seg not in tp.model_fields:
                return None
            tp = tp.model_fields[seg].annotation
        elif typing.get_origin(tp) in (list, dict):
            tp = typing.get_args(tp)[-1]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _toml_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def _list_expected(loc: tuple, path: str, value: Any) -> str:
    """What a list field wants, in TOML's words: pydantic's "Input should be a valid
    list" did not say that ``[flows]`` (a table) must be ``[[flows]]`` (a list of them)."""
    got = _toml_kind(value)
    if _model_at((*loc, 0)) is not None:  # a list of tables
        if not all(isinstance(x, str) for x in loc):
            return f"a list of tables, written [{{...}}, {{...}}] in TOML; got {got}"
        if isinstance(value, dict):
            return (
                f"a list of tables, written [[{path}]] in TOML (the header once per entry); "
                f"[{path}] makes a single table"
            )
        return (
            f"a list of tables, written [[{path}]] in TOML (the header once per entry); got {got}"
        )
    return f"a list, written [a, b, ...] in TOML; got {got}"


def field_problems(err: ValidationError) -> list[tuple[str, str]]:
    """(field path, message) for each of pydantic's errors, one per path."""
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(
            x for x in e["loc"] if not (isinstance(x, str) and x.startswith(("function-", "lax-")))
        )
        # A discriminated union (bottleneck.aqm) puts the tag in the path: drop it.
        aqm_model = None
        if (
            "aqm" in loc
            and loc.index("aqm") + 1 < len(loc)
            and loc[loc.index("aqm") + 1] in AQM_KINDS
        ):
            i = loc.index("aqm") + 1
            aqm_model = aqm_model_of(loc[i])
            loc = loc[:i] + loc[i + 1 :]
        # Union members appear as extra loc entries (e.g. 'bool', 'int'); keep real fields.
        path = format_path(
            [
                x
                for x in loc
                if not (isinstance(x, str) and x in ("bool", "int", "float", "str", "dict", "list"))
            ]
        )
        kind = e["type"]
        msg = str(e["msg"])
        if kind == "extra_forbidden":
            model = (
                aqm_model
                if aqm_model is not None and loc[-2] == "aqm"
                else _model_at(tuple(loc[:-1]))
            )
            known = ", ".join(model.model_fields) if model else ""
            msg = f"unknown field '{loc[-1]}'" + (f"; allowed: {known}" if known else "")
        elif kind == "missing":
            msg = "required field is missing"
        elif kind == "list_type":
            msg = _list_expected(loc, path, e.get("input"))
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        out.append((path, msg))
    # A union failing on every member reports once per member; keep the first per path.
    seen: dict[str, str] = {}
    for path, msg in out:
        seen.setdefault(path, msg)
    return list(seen.items())
