"""One of the repository's scripts/*.py as a module, for the tests of its logic
(tests/scripts/): the scripts are programs, not a package, so they are loaded by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script_module(name: str) -> ModuleType:
    """scripts/NAME.py, loaded afresh (registered in sys.modules while it runs, since a
    dataclass looks its module up there)."""
    spec = importlib.util.spec_from_file_location(f"tcplab_script_{name}", SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
