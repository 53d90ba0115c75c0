"""Spec paths such as ``bottleneck.buffer`` or ``flows[1].params.cwnd_gain``: parsing,
checking that a path names a field of the spec schema, and setting a value in a raw
(not yet validated) spec dictionary. Used by ``--set`` and by ``[sweep]`` grids."""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Union

from pydantic import BaseModel

Segment = str | int
_SEGMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<idx>(\[\d+\])*)$")


def parse_path(path: str) -> list[Segment]:
    """Split ``flows[1].params.cwnd_gain`` (or ``flows.1.params.cwnd_gain``) into segments.

    Raises
    ------
    ValueError
        If the path is not a dotted sequence of names with optional ``[index]`` suffixes.
    """
    out: list[Segment] = []
    if not path:
        raise ValueError("empty path")
    for part in path.split("."):
        if part.isdigit():
            out.append(int(part))
            continue
        m = _SEGMENT.match(part)
        if not m:
            raise ValueError(
                f"cannot parse path {path!r}; write e.g. 'bottleneck.buffer' or 'flows[1].cc'"
            )
        out.append(m.group("name"))
        out.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group("idx")))
    return out


def format_path(segments: typing.Sequence[Segment]) -> str:
    """The inverse of :func:`parse_path`: ``['flows', 1, 'cc'] -> 'flows[1].cc'``."""
    s = ""
    for seg in segments:
        if isinstance(seg, int):
            s += f"[{seg}]"
        else:
            s += ("." if s else "") + seg
    return s


def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated from a type annotation."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin is Union or origin is types.UnionType:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        else:
            return tp


def _union_member(tp: Any, node: Any, seg: Segment) -> Any:
    """For a union of models tagged by ``kind`` (``bottleneck.aqm``): the member the raw
    table's ``kind`` selects, else the first member that has the field ``seg``."""
    origin = typing.get_origin(tp)
    if not (origin is Union or origin is types.UnionType):
        return tp
    members = [a for a in typing.get_args(tp) if isinstance(a, type) and issubclass(a, BaseModel)]
    if not members:
        return tp
    kind = node.get("kind") if isinstance(node, dict) else None
    for m in members:
        tag = m.model_fields.get("kind")
        if kind is not None and tag is not None and kind in typing.get_args(tag.annotation):
            return m
    return next((m for m in members if isinstance(seg, str) and seg in m.model_fields), members[0])


def check_path(model: type[BaseModel], segments: list[Segment], raw: dict) -> None:
    """Raise ``ValueError`` unless ``segments`` names a field of ``model``'s schema.

    List indices are checked against ``raw`` (the spec being modified), dictionary fields
    (such as ``params``) accept any key: their keys are validated later against the
    algorithm registry.
    """
    tp: Any = model
    node: Any = raw
    where: list[Segment] = []
    for seg in segments:
        tp = _union_member(_unwrap(tp), node, seg)
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if not isinstance(seg, str) or seg not in tp.model_fields:
                known = ", ".join(tp.model_fields)
                at = format_path(where) or "the spec"
                raise ValueError(
                    f"{format_path(where + [seg])!r} names no field; {at} has: {known}"
                )
            tp = tp.model_fields[seg].annotation
        elif origin in (list, list):
            if not isinstance(seg, int):
                raise ValueError(
                    f"{format_path(where)} is a list; index it, e.g. {format_path(where)}[0]"
                )
            n = len(node) if isinstance(node, list) else 0
            if seg >= n:
                raise ValueError(
                    f"{format_path(where + [seg])!r} names no field; {format_path(where)} has {n} entries"
                )
            tp = typing.get_args(tp)[0]
        elif origin in (dict, dict):
            # A table of scalars keyed by name (params): exactly one key below it.
            rest = segments[len(where) :]
            if len(rest) != 1 or not isinstance(rest[0], str):
                raise ValueError(
                    f"{format_path(segments)!r} names no field; {format_path(where)} takes one "
                    f"name below it, e.g. {format_path(where)}.cwnd_gain"
                )
            return
        else:
            raise ValueError(
                f"{format_path(where + [seg])!r} names no field; {format_path(where)} is a value"
            )
        where.append(seg)
        node = (
            node.get(seg)
            if isinstance(node, dict) and isinstance(seg, str)
            else (
                node[seg]
                if isinstance(node, list) and isinstance(seg, int) and seg < len(node)
                else None
            )
        )


def expand_path(path: str, raw: dict) -> list[str]:
    """``flows[*].cc`` stands for the path in every flow group of ``raw``
    (``flows[0].cc``, ``flows[1].cc``, ...): one sweep axis or ``--set`` that changes all
    groups together. Other paths are returned as they are.

    Raises
    ------
    ValueError
        If ``[*]`` follows something that is not a list of the spec.
    """
    if "[*]" not in path:
        return [path]
    head, _, tail = path.partition("[*]")
    node: Any = raw
    for seg in parse_path(head):
        node = (
            node.get(seg)
            if isinstance(node, dict) and isinstance(seg, str)
            else (
                node[seg]
                if isinstance(node, list) and isinstance(seg, int) and seg < len(node)
                else None
            )
        )
    if not isinstance(node, list) or not node:
        raise ValueError(
            f"{path!r}: [*] needs a list before it, e.g. 'flows[*].cc'; {head!r} is not one"
        )
    return [p for i in range(len(node)) for p in expand_path(f"{head}[{i}]{tail}", raw)]


def set_path(raw: dict, segments: list[Segment], value: Any) -> None:
    """Set ``value`` at ``segments`` in the raw spec dictionary, creating tables as needed."""
    node: Any = raw
    for i, seg in enumerate(segments[:-1]):
        nxt = segments[i + 1]
        if isinstance(seg, int):
            node = node[seg]
            continue
        if seg not in node or node[seg] is None:
            node[seg] = [] if isinstance(nxt, int) else {}
        node = node[seg]
    node[segments[-1]] = value
