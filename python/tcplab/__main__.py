"""``python -m tcplab`` is the ``tcplab`` command."""

import sys

from tcplab import interrupts

interrupts.install()  # before the command's modules import: a Ctrl-C there is one too
try:
    from tcplab.cli.app import main
except KeyboardInterrupt:  # Ctrl-C while the command's own modules are still importing
    print("tcplab: interrupted", file=sys.stderr)
    sys.exit(130)
except Exception:
    if not interrupts.received():
        raise
    print("tcplab: interrupted", file=sys.stderr)  # an import error the Ctrl-C caused
    sys.exit(130)

sys.exit(main())
