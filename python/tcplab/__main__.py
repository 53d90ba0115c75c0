"""``python -m tcplab`` is the ``tcplab`` command."""

import sys

try:
    from tcplab.cli.app import main
except KeyboardInterrupt:  # Ctrl-C while the command's own modules are still importing
    print("tcplab: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
