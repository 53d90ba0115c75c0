"""The ``tcplab`` command: :mod:`.app` (main: exit codes, signals, errors as one line),
:mod:`.parser` (subcommands and options) and :mod:`.commands` (one ``cmd_*`` each)."""

from tcplab.cli.app import main

__all__ = ["main"]
