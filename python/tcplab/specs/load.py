"""A spec from its TOML file: read (bounded, UTF-8, paths made absolute), ``--set``
overrides applied, validated against the models (:mod:`tcplab.specs.model`) and the
cross-field checks (:mod:`tcplab.specs.cross_checks`), every problem a field path."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from tcplab.bpf import absolute_paths as absolute_bpf_paths
from tcplab.errors import SpecError
from tcplab.policy import absolute_paths as absolute_policy_paths
from tcplab.preset_file import absolute_paths as absolute_preset_paths
from tcplab.specs.cross_checks import cross_check
from tcplab.specs.files import read_bounded
from tcplab.specs.limits import check_event_headers, check_raw_counts
from tcplab.specs.model import (
    Spec,
)
from tcplab.specs.paths import check_path, expand_path, parse_path, set_path
from tcplab.specs.problems import field_problems
from tcplab.specs.traces import absolute_trace_paths

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal (``2.0``, ``true``, ``["a"]``) or else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # TOMLDecodeError, or an integer of 4300+ digits
        return text


def apply_overrides(raw: dict, overrides: dict[str, Any], what: str = "--set") -> dict:
    """A copy of ``raw`` with each ``path: value`` set; paths must name spec fields."""
    raw = copy.deepcopy(raw)
    problems = []
    for pattern, value in overrides.items():
        try:
            paths = expand_path(pattern, raw)
        except ValueError as exc:
            problems.append((f"{what} {pattern}", str(exc)))
            continue
        for path in paths:
            try:
                segments = parse_path(path)
                check_path(Spec, segments, raw)
            except ValueError as exc:
                problems.append((f"{what} {path}", str(exc)))
                continue
            set_path(raw, segments, copy.deepcopy(value))
    if problems:
        raise SpecError(problems)
    return raw


def parse_spec(
    raw: dict[str, Any], source: str | None = None, check_algorithms: bool = True
) -> Spec:
    """Validate a raw spec dictionary (as read from TOML).

    Parameters
    ----------
    raw : dict
        The TOML document.
    source : str, optional
        Its file name, for error messages.
    check_algorithms : bool
        Check ``cc`` names and ``params`` against the engine's registry.

    Raises
    ------
    SpecError
        Naming every problem found, each with its field path.
    """
    counts = check_raw_counts(raw)
    if counts:  # before validation, whose cost grows with them
        raise SpecError(counts, source)
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as err:
        raise SpecError(field_problems(err), source) from None
    problems = cross_check(spec, check_algorithms)
    if problems:
        raise SpecError(problems, source)
    return spec


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file; syntax errors become a :class:`SpecError` naming the file."""
    p = Path(path)
    try:
        data = read_bounded(p)
    except ValueError as exc:
        raise SpecError([("", str(exc))], str(p)) from None
    except FileNotFoundError:
        raise SpecError([("", "no such file")], str(p)) from None
    except IsADirectoryError:
        raise SpecError([("", "is a directory; give a spec file (TOML)")], str(p)) from None
    except OSError as exc:
        raise SpecError([("", f"cannot be read: {exc.strerror or exc}")], str(p)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bom = (
            " (it starts with a UTF-16 byte-order mark)"
            if data[:2] in (b"\xff\xfe", b"\xfe\xff")
            else ""
        )
        raise SpecError(
            [
                (
                    "",
                    f"not UTF-8 text{bom}: byte 0x{data[exc.start]:02x} at offset {exc.start}; "
                    "TOML files are UTF-8",
                )
            ],
            str(p),
        ) from None
    counts = check_event_headers(text)
    if counts:  # before parsing, whose cost grows with them
        raise SpecError(counts, str(p))
    try:
        raw = absolute_bpf_paths(absolute_trace_paths(tomllib.loads(text), p.parent), p.parent)
        return absolute_preset_paths(absolute_policy_paths(raw, p.parent), p.parent)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([("", f"not valid TOML: {exc}")], str(p)) from None
    except ValueError as exc:  # Python's own limit: an integer literal of 4300+ digits
        raise SpecError([("", f"not a spec: {str(exc).split(';')[0]}")], str(p)) from None
    except RecursionError:
        raise SpecError([("", "not a spec: tables or arrays nested too deeply")], str(p)) from None


def load_spec(
    path: str | Path,
    overrides: dict[str, Any] | None = None,
    check_algorithms: bool = True,
    what: str = "--set",
) -> Spec:
    """Read, override and validate a spec file (``what`` names the overrides in errors:
    ``--set`` on the command line, ``overrides`` in the API)."""
    raw = read_toml(path)
    try:
        if overrides:
            raw = apply_overrides(raw, overrides, what)
        return parse_spec(raw, str(path), check_algorithms)
    except SpecError as err:
        raise err.with_source(str(path)) from None


SpecLike = Spec | str | Path | dict
"""What the API takes as a spec: a Spec, a TOML file's path or a raw dictionary."""


def as_spec(spec: SpecLike, overrides: dict[str, Any] | None = None) -> Spec:
    """A validated :class:`Spec` from a Spec, a TOML path or a raw dictionary, with
    ``overrides`` (named "overrides" in errors) applied."""
    if isinstance(spec, Spec):
        return (
            parse_spec(apply_overrides(spec.to_dict(), overrides, "overrides"))
            if overrides
            else spec
        )
    if isinstance(spec, dict):
        return parse_spec(apply_overrides(spec, overrides, "overrides") if overrides else spec)
    return load_spec(spec, overrides, what="overrides")
