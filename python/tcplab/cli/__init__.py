"""The ``tcplab`` command (:mod:`.app`: the parser and one ``cmd_*`` per subcommand)."""

from tcplab.cli.app import main

__all__ = ["main"]
