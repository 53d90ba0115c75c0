"""Whether the user pressed Ctrl-C, remembered: the ``tcplab`` command's SIGINT handler.

Python turns SIGINT into a KeyboardInterrupt wherever the interpreter happens to be, and
code in between may turn that into another error: Python wraps an exception raised in
``__set_name__`` in a RuntimeError (pydantic's class creation met one), and a Rust
extension that was importing a module when it arrived panics. The command then failed
with exit 1 and an "internal error" although the user had only interrupted it (a CI
run on a loaded machine hit both). With this handler installed the command knows a
failure after a Ctrl-C is the Ctrl-C's and exits 130 quietly.
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


def _sigterm_interrupts(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """While inside, SIGTERM raises KeyboardInterrupt (so ``finally`` blocks run) when
    nobody else handles it: the ``tcplab`` command installs its own handler, but a script
    or notebook that drives a backend directly (scripts/fidelity.py, the Python API) has
    Python's default, under which SIGTERM ends the process at once and a kernel run's
    namespaces stay behind until the next run sweeps them. Only from the main thread, and
    only over the default disposition; the previous handler is restored on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _sigterm_interrupts)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
