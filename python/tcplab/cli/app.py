"""The ``tcplab`` command line: run, sweep, reproduce, report, compare, algorithms, validate,
doctor.

Exit status: 0 success, 1 a ``[[checks]]`` entry failed (each is printed) or an internal
failure, 2 a problem with the input (printed as ``file: field.path:
message``; no output directory is left behind; a user's BPF program that fails during
the run is one, backends/sim/run.py), 1 an internal failure of the simulator (reported
in one line, never as a Rust panic), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from tcplab.cli.commands import EXIT_INPUT, EXIT_INTERNAL
from tcplab.cli.parser import build_parser
from tcplab.errors import EngineError, SpecError, disk_full


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _disk_full_message(args: argparse.Namespace, err: OSError) -> str:
    """No space left: where, and what of the command's output was kept."""
    where = f" writing {err.filename}" if getattr(err, "filename", None) else ""
    out = getattr(args, "output", None)
    kept = {
        "cmd_run": f"nothing partial was kept; an earlier run at {out} is unchanged",
        "cmd_sweep": f"the runs that finished are kept in {out}/runs and listed in "
        f"{out}/table.csv (when there was room for it); free space and run the sweep again "
        "to do the rest",
        "cmd_reproduce": f"the runs that finished are kept in {out}/runs; free space and run "
        "it again to do the rest",
    }.get(getattr(args.func, "__name__", ""), "nothing partial was kept")
    return f"tcplab: no space left on the device{where}: {kept}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # during argument parsing or a lazy import
        print("tcplab: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None = None) -> int:
    import signal

    from tcplab import interrupts

    if argv is None and threading_is_main():
        signal.signal(signal.SIGTERM, interrupts.on_sigterm)
        interrupts.install()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except interrupts.Terminated:
        print("tcplab: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader went away (`tcplab algorithms | head -1`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except SpecError as err:
        print(
            err.render()
            if err.source
            else SpecError(err.problems, getattr(args, "spec", None)).render(),
            file=sys.stderr,
        )
        return EXIT_INPUT
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as err:
        print(f"tcplab: {err}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as err:
        if not disk_full(err) or os.environ.get("TCPLAB_DEBUG"):
            raise
        print(_disk_full_message(args, err), file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130
    except BaseException as err:
        if isinstance(err, SystemExit):
            raise
        if interrupts.received():  # a failure the Ctrl-C caused (tcplab.interrupts)
            print("tcplab: interrupted", file=sys.stderr)
            return 130
        if isinstance(err, (EngineError, RuntimeError)):
            print(f"tcplab: error: {err}", file=sys.stderr)
            return EXIT_INTERNAL
        # a Rust panic (pyo3 PanicException) or a bug in tcplab
        if os.environ.get("TCPLAB_DEBUG"):
            raise
        print(
            f"tcplab: internal error: {type(err).__name__}: {err} (set TCPLAB_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
