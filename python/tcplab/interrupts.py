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

import signal
import sys
import threading
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
