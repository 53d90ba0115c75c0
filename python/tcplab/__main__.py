"""``python -m tcplab`` is the ``tcplab`` command."""

import sys

from tcplab.cli.app import main

sys.exit(main())
