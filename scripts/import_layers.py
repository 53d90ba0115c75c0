"""The internal import graph of python/tcplab, its circles and its layers.

Reads every module with the stdlib `ast` (nothing is imported, so it runs without the
compiled engine) and lists each `import tcplab...` / `from tcplab... import` / relative
import, noting whether it sits at module level or inside a function. The layer order
below is the one docs/ARCHITECTURE.md describes: a module may import from its own layer
or an earlier one, never a later one. tests/test_import_layers.py runs `violations()` so
CI holds the rule.

    python scripts/import_layers.py            # counts, circles, layer violations
    python scripts/import_layers.py --edges    # every internal import
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "python" / "tcplab"

# Earliest first. A module belongs to the layer of the longest prefix that matches its
# dotted name ("=name": that module only). Each stage imports only from its own or earlier
# ones. A new top-level module or package must be placed here (the test fails until it is).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "tcplab.errors",
            "tcplab.interrupts",
            "tcplab.version",
            "tcplab.engine",
            "tcplab._engine",
            "tcplab.bpf",
            "tcplab.bpf_build",
            "tcplab.bpf_loader",
            "tcplab.bpf_shipped",
            "tcplab.onnx_policy",
            "tcplab.policy",
            "tcplab.preset_file",
            "tcplab.metric_table",
            "tcplab.examples",
            "tcplab.cc_names",
        ),
    ),
    ("specs", ("tcplab.specs",)),
    ("lowering", ("tcplab.lowering",)),
    ("backends", ("tcplab.backends",)),
    ("storage", ("tcplab.storage",)),
    ("analysis", ("tcplab.analysis",)),
    ("report", ("tcplab.report",)),
    ("orchestration", ("tcplab.runs",)),
    ("reproduce", ("tcplab.reproduce",)),
    # Learning environments: specs, lowering, the stepping engine and run directories.
    ("gym", ("tcplab.gym",)),
    ("entry", ("tcplab.cli", "tcplab.api", "tcplab.__main__", "=tcplab")),
]


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (the longest prefix that is a module of ours)
    line: int
    in_function: bool


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    # tcplab/data holds shipped examples (examples/gym/gym_cem.py): user scripts that
    # import tcplab from outside, not modules of the package.
    return {
        module_name(p): p
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] != "data"
    }


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest dotted prefix of `name` that is one of our modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def _edges_of(mod: str, path: Path, known: dict[str, Path]) -> list[Edge]:
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    out: list[Edge] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "tcplab" or alias.name.startswith("tcplab."):
                        target = _resolve(alias.name, known)
                        if target:
                            out.append(Edge(mod, target, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = mod.split(".") if is_package else mod.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                if not (stem == "tcplab" or stem.startswith("tcplab.")):
                    continue
                for alias in child.names:
                    # `from tcplab.x import y`: y may be a submodule or a name in x.
                    target = _resolve(f"{stem}.{alias.name}", known) or _resolve(stem, known)
                    if target and target != mod:
                        out.append(Edge(mod, target, child.lineno, in_function))
            else:
                visit(child, inner)

    visit(tree, False)
    return out


def edges() -> list[Edge]:
    known = modules()
    known.setdefault("tcplab._engine", ROOT / "_engine")
    out: list[Edge] = []
    for mod, path in known.items():
        if path.suffix == ".py":
            out.extend(_edges_of(mod, path, known))
    # One edge per statement and target: `from x import a, b` is one import.
    seen: set[tuple[str, str, int]] = set()
    unique = []
    for e in out:
        key = (e.source, e.target, e.line)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return unique


def layer_of(mod: str) -> tuple[int, str]:
    best: tuple[int, int, str] | None = None  # (prefix length, index, name)
    for index, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix.startswith("="):
                matches = mod == prefix[1:]
            else:
                matches = mod == prefix or mod.startswith(prefix + ".")
            if matches:
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index, name)
    if best is None:
        raise KeyError(f"{mod} is in no layer of scripts/import_layers.py LAYERS")
    return best[1], best[2]


def violations(all_edges: list[Edge] | None = None) -> list[str]:
    """Each import of a later layer, as 'module:line imports target (layer a -> later b)'."""
    out = []
    for e in all_edges if all_edges is not None else edges():
        src_index, src_layer = layer_of(e.source)
        dst_index, dst_layer = layer_of(e.target)
        if dst_index > src_index:
            out.append(
                f"{e.source}:{e.line} imports {e.target}: layer {src_layer!r} may not "
                f"import the later layer {dst_layer!r}"
            )
    return out


def circles(all_edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted.

    Package `__init__` edges to their own submodules are left out: a package re-exporting
    its parts is not a circle a reader has to untangle.
    """
    graph: dict[str, set[str]] = {}
    for e in all_edges:
        if e.target.startswith(e.source + "."):
            continue
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                result.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every internal import")
    args = parser.parse_args()
    all_edges = edges()
    if args.edges:
        for e in sorted(all_edges, key=lambda e: (e.source, e.line)):
            where = "function" if e.in_function else "top"
            print(f"{e.source}:{e.line} -> {e.target} ({where})")
    statements = {(e.source, e.line, e.in_function) for e in all_edges}
    inside = [s for s in statements if s[2]]
    found = circles(all_edges)
    print(f"internal import statements: {len(statements)}, inside functions: {len(inside)}")
    print(f"import circles: {len(found)}")
    for comp in found:
        print("  " + " <-> ".join(comp))
    try:
        bad = violations(all_edges)
    except KeyError as err:
        print(err.args[0])
        return 1
    print(f"layer violations: {len(bad)}")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
