"""mypy checks a typed event's indexing, not the key named in ``event.get("…")``: this guard does. Every
key the package reads by name from a recorded event (a variable named ``event`` or ``recorded``) is one
that some kind in ``recording/event_types.py`` declares, so a misspelt key fails here."""

from __future__ import annotations

import ast

from support import paths

from wiretap.recording import event_types

EVENT_NAMES = frozenset({"event", "recorded"})


def declared_keys() -> set[str]:
    keys: set[str] = set()
    for shape in event_types.BY_KIND.values():
        keys |= set(shape.__required_keys__) | set(shape.__optional_keys__)
    return keys


def keys_read(source: str) -> list[tuple[int, str]]:
    """(line, key) of each literal key read from an event: ``event.get("k")``, ``event["k"]``, ``"k" in event``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        name: ast.expr | None = None
        key: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            name, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            name, key = node.value, node.slice
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            name, key = node.comparators[0], node.left
        named = isinstance(name, ast.Name) and name.id in EVENT_NAMES
        if named and isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.append((node.lineno, key.value))
    return found


def test_a_misspelt_event_key_is_found() -> None:
    source = 'def f(event):\n    return event.get("signl"), event["kind"], "forwarded" in event\n'
    assert sorted(keys_read(source)) == [(2, "forwarded"), (2, "kind"), (2, "signl")]
    assert {key for _, key in keys_read(source)} - declared_keys() == {"signl"}


def test_every_key_the_package_reads_from_an_event_is_declared_by_an_event_kind() -> None:
    declared = declared_keys()
    reads = [(path, line, key) for path in sorted(paths.REPO.joinpath("wiretap").rglob("*.py"))
             for line, key in keys_read(path.read_text())]  # fmt: skip
    assert len(reads) > 300, "the guard no longer finds the package's event reads"
    undeclared = [f"{path.relative_to(paths.REPO)}:{line}: {key!r}" for path, line, key in reads if key not in declared]
    assert undeclared == []
