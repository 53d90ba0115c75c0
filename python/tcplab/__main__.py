"""``python -m tcplab`` is the ``tcplab`` command."""

import sys

from .cli import main

sys.exit(main())
