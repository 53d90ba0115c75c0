"""tcplab: a reproducible congestion-control lab.

>>> import tcplab
>>> result = tcplab.run("experiments/quickstart.toml")      # doctest: +SKIP
>>> result.summary[["flow", "cc", "goodput_bps", "share"]]  # doctest: +SKIP
>>> sweep = tcplab.load_sweep("out/buffer-sweep")             # doctest: +SKIP
>>> sweep.table.groupby(["bottleneck.buffer", "cc"])["share"].mean()  # doctest: +SKIP
"""

from tcplab.errors import EngineError, SpecError
from tcplab.version import __version__

__all__ = ["run", "sweep", "load", "load_sweep", "SpecError", "EngineError", "__version__"]


def __getattr__(name: str):  # PEP 562
    # run/sweep/load pull in pandas and matplotlib; importing them lazily keeps
    # `import tcplab.cli` (the command's first step) quick, so a Ctrl-C at start-up lands
    # inside the CLI's handler rather than in an import.
    if name in ("run", "sweep", "load", "load_sweep"):
        from tcplab import api

        return getattr(api, name)
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")
