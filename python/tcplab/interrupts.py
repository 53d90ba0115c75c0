"""Whether the user pressed Ctrl-C, remembered: the ``tcplab`` command's SIGINT handler.

Python turns SIGINT into a KeyboardInterrupt wherever the interpreter happens to be, and
code in between may turn that into another error: Python wraps an exception raised in
``__set_name__`` in a RuntimeError (pydantic's class creation met one), and a Rust
extension that was importing a module when it arrived panics. The command then failed
with exit 1 and an "internal error" although the user had only interrupted it (a CI
run on a loaded machine hit both). With this handler installed the command knows a
failure after a Ctrl-C is the Ctrl-C's and exits 130 quietly.

SIGTERM is turned into :class:`Terminated`, a KeyboardInterrupt, so that it unwinds
(removing temporaries, a kernel run's namespaces) as Ctrl-C does: by the command for its
whole life, and by a kernel run for the run's wherever nothing else handles it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

_received = False


def _on_sigint(signum: int, frame: Any) -> None:
    global _received
    _received = True
    raise KeyboardInterrupt


def _unraisable(u: Any) -> None:
    """After a Ctrl-C, a KeyboardInterrupt raised where Python cannot raise it (an
    import lock's callback, a destructor) is the interruption already being reported:
    Python would print it as "Exception ignored in ..." with a traceback."""
    if _received and isinstance(u.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(u)


def install() -> None:
    """Handle SIGINT as Python does (a KeyboardInterrupt), remembering that it came.
    Only from the main thread (signal handlers can be set nowhere else)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
        sys.unraisablehook = _unraisable


def received() -> bool:
    """Whether SIGINT arrived since ``install``."""
    return _received


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that temporaries are removed on the way out
    (a KeyboardInterrupt, so every layer that lets Ctrl-C through lets it through too)."""


def on_sigterm(signum: int, frame: Any) -> None:
    """The SIGTERM handler: the ``tcplab`` command's for its whole life, a kernel run's
    (``sigterm_unwinds``) for the run's."""
    raise Terminated()


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (so ``finally`` blocks run) when
    nobody else handles it: the ``tcplab`` command installs ``on_sigterm`` itself, but a
    script or notebook that drives a backend directly (scripts/fidelity.py, the Python
    API) has Python's default, under which SIGTERM ends the process at once and a kernel
    run's namespaces stay behind until the next run sweeps them. Only from the main
    thread, and only over the default disposition; the default is restored on the way
    out."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
