"""The errors tcplab reports to a user: a spec problem names the file, the field path and
what is allowed; an engine failure is reported without a Rust backtrace."""

from __future__ import annotations

import errno
from collections.abc import Iterable


class SpecError(ValueError):
    """One or more problems with an experiment spec.

    Parameters
    ----------
    problems : iterable of (path, message)
        ``path`` is the TOML field path (``flows[1].cc``), ``message`` says what is wrong
        and what is allowed.
    source : str, optional
        The spec file (or ``<spec>`` for an in-memory spec).
    """

    def __init__(self, problems: Iterable[tuple[str, str]], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        """One line per problem: ``file: field.path: message``."""
        prefix = f"{self.source}: " if self.source else ""
        return "\n".join(
            f"{prefix}{path}: {msg}" if path else f"{prefix}{msg}" for path, msg in self.problems
        )

    def with_source(self, source: str) -> SpecError:
        """The same problems attributed to ``source``."""
        return SpecError(self.problems, source)

    def __str__(self) -> str:
        return self.render()


class EngineError(RuntimeError):
    """The simulator failed internally (a bug in tcplab, not in the spec)."""


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` says the disk is full (ENOSPC; pyarrow's errors carry only the text)."""

    return isinstance(err, OSError) and (
        err.errno == errno.ENOSPC or "No space left on device" in str(err)
    )
