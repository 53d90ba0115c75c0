"""tcplab: a reproducible congestion-control lab.

>>> import tcplab
>>> result = tcplab.run("experiments/quickstart.toml")      # doctest: +SKIP
>>> result.summary[["cc", "goodput_bps", "share"]]          # doctest: +SKIP
"""

__version__ = "0.1.0"

from .api import load, run, sweep  # noqa: E402
from .errors import EngineError, SpecError  # noqa: E402

__all__ = ["run", "sweep", "load", "SpecError", "EngineError", "__version__"]
