"""The package's architecture as a test: subpackages import only from layers below them, and no modules
import each other in a circle. Imports inside functions count too (a lazy import is still an edge)."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Set

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stgnn_diag"

#: Bottom to top. A module may import from its own subpackage and from any layer strictly below its own.
#: ``(root)`` is ``stgnn_diag/__init__.py`` and its top-level helper modules sit in the first two layers.
LAYERS: List[Set[str]] = [
    {"_lazy", "_io", "_values", "_tensor_checks", "metrics"},
    {"(root)", "calendar", "tables"},
    {"nn"},
    {"models"},
    {"zoo"},
    {"datasets"},
    {"baselines"},
    {"training"},
    {"integrations"},
    {"sensitivity", "bench"},
    {"cli"},
]


def _module_name(path: Path) -> str:
    parts = ("stgnn_diag",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> Dict[str, Set[str]]:
    """``{module: the package modules it imports}``, from the source (every ``import`` statement, at any depth)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: Dict[str, Set[str]] = defaultdict(set)
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:  # `from . import x` imports module x, not the package
                    sub = f"{target}.{alias.name}"
                    found = sub if sub in files else target
                    if found in files and found != name:
                        graph[name].add(found)
    return graph


def _subpackage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _layer(sub: str) -> int:
    for i, members in enumerate(LAYERS):
        if sub in members:
            return i
    raise AssertionError(f"stgnn_diag.{sub} is in no layer of tests/test_layers.py: place it")


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


GRAPH = import_graph()


def test_the_graph_sees_known_edges():
    # guards the parser: these edges exist, so a graph without them would pass the layer test vacuously
    assert "stgnn_diag.nn" in GRAPH["stgnn_diag.models.sublayers"]
    assert "stgnn_diag.nn.regularizers.registry" in GRAPH["stgnn_diag.nn.regularizers.mask"]
    assert any(t.startswith("stgnn_diag.zoo") for t in GRAPH["stgnn_diag.training.fit"])


@pytest.mark.parametrize("sub", sorted({_subpackage(m) for m in GRAPH} | {_subpackage(t) for ts in GRAPH.values()
                                                                            for t in ts}))
def test_no_import_from_a_layer_above(sub):
    upward = sorted(f"{m} -> {t}" for m, ts in GRAPH.items() if _subpackage(m) == sub for t in ts
                    if _subpackage(t) != sub and _layer(_subpackage(t)) >= _layer(sub))
    assert not upward, "imports from the same or a higher layer:\n" + "\n".join(upward)


def test_no_circle_of_modules():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
