"""The stages of python/tcplab form a stack (docs/ARCHITECTURE.md, "Layout"): every module
imports only from its own stage or earlier ones, and no modules import each other in a
circle. scripts/import_layers.py draws the graph from the source (ast, nothing imported);
this test holds the rule, so a new import that breaks it fails CI with the import named."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "import_layers.py"


def _layers():
    spec = importlib.util.spec_from_file_location("import_layers", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["import_layers"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_module_has_a_layer():
    layers = _layers()
    for name in layers.modules():
        layers.layer_of(name)  # raises KeyError naming the module


def test_no_module_imports_a_later_layer():
    layers = _layers()
    bad = layers.violations()
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_import_circles():
    layers = _layers()
    found = layers.circles(layers.edges())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_a_later_import_is_named_with_both_layers():
    """The check can fail: an edge from storage up into report is reported as such."""
    layers = _layers()
    edge = layers.Edge("tcplab.storage.directory", "tcplab.report.run_report", 7, True)
    assert layers.violations([edge]) == [
        "tcplab.storage.directory:7 imports tcplab.report.run_report: layer 'storage' may "
        "not import the later layer 'report'"
    ]
    assert layers.circles(
        [
            layers.Edge("tcplab.a", "tcplab.b", 1, False),
            layers.Edge("tcplab.b", "tcplab.a", 1, True),
        ]
    ) == [["tcplab.a", "tcplab.b"]]
