"""The package's layers, from ``wire`` up to ``cli``: no module imports upward, no modules import each other.

Imports are read from the source (module level and inside functions alike), so a cycle or an upward
import hidden in a function fails here too. ``KNOWN_UPWARD`` and ``KNOWN_CYCLES`` list what is still to
be cut; an entry that no longer occurs fails as well, so the lists only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import paths

PACKAGE = paths.REPO / "wiretap"

# Lowest first; a module may import its own layer and the layers before it.
LAYERS: list[set[str]] = [
    {"wiretap", "errors", "files", "plural"},
    {"wire"},
    {"recording"},
    {"transports", "forward"},
    {"analysis"},
    {"otel"},
    {"run"},
    {"judge"},
    {"replay"},
    {"render"},
    {"wrap"},
    {"export", "scrub", "importers", "schemas", "demo"},
    {"mcp", "ui", "lab"},
    {"cli", "commands", "__main__", "entry"},
]

KNOWN_UPWARD: set[tuple[str, str]] = set()

KNOWN_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    names = set(found)
    return {name: imports_of(name, path, names) for name, path in found.items()}


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else "wiretap"
    for index, layer in enumerate(LAYERS):
        if top in layer:
            return index
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def upward_imports(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, targets in edges.items() for b in targets if layer_of(b) > layer_of(a)}


def cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_every_package_of_wiretap_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    upward = upward_imports(graph())
    assert sorted(upward - KNOWN_UPWARD) == [], "upward imports"
    assert sorted(KNOWN_UPWARD - upward) == [], "cut already: remove from KNOWN_UPWARD"


def test_no_modules_import_each_other_in_a_circle() -> None:
    found = cycles(graph())
    assert sorted(sorted(c) for c in found - KNOWN_CYCLES) == [], "import cycles"
    assert sorted(sorted(c) for c in KNOWN_CYCLES - found) == [], "cut already: remove from KNOWN_CYCLES"


def test_the_scan_sees_an_upward_import_and_a_cycle_inside_functions() -> None:
    edges = {"wiretap.wire.a": {"wiretap.cli"}, "wiretap.cli": {"wiretap.wire.a"}}
    assert upward_imports(edges) == {("wiretap.wire.a", "wiretap.cli")}
    assert cycles(edges) == {frozenset(edges)}
