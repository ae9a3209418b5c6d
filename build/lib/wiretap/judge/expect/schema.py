"""Reading an expectations file: YAML with ``yaml.safe_load``, every check validated, errors with a line.

version: 1
server: reports          # optional: which recording of a session folder
expect:
  - poll_interval: {within: 10%}
  - cancel_on_exit: sent
  - no_findings: {severity: error}
  - max_elicitation_gap: 5
  - method_sequence: {contains: [server/discover, tools/list, tools/call]}
  - messages: {method: tools/call, min: 1, max: 3}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wiretap.errors import BadInput


class BadExpectations(BadInput):
    """A one-line reason, with the file and line."""


@dataclass(frozen=True)
class Expectation:
    name: str
    arg: Any
    line: int


@dataclass(frozen=True)
class Expectations:
    checks: list[Expectation]
    server: str | None = None
    """For a session folder: the server whose recording is checked (default: every recording)."""


def _line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


# An expectations file is a few dozen lines; these bound what a hostile one can cost.
MAX_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_NODES = 100_000
"""Nodes once every alias is expanded (a billion laughs is a few aliases deep)."""


class _TooMuch(Exception):
    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line = line


class _LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with a depth and an alias limit, checked while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _TooMuch(line, f"more than {MAX_ALIASES} aliases")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _TooMuch(line, f"nested deeper than {MAX_DEPTH} levels")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many nodes ``node`` stands for with aliases expanded (a shared node counts each time)."""
    if id(node) not in sizes:
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        sizes[id(node)] = min(MAX_NODES + 1, 1 + sum(_expanded_size(child, sizes) for child in children))
    return sizes[id(node)]


def _culprit(node: yaml.Node, sizes: dict[int, int]) -> yaml.Node:
    """The first node, in reading order, that is too big through aliases to earlier nodes."""
    while True:
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        later = [
            c
            for c in (children if isinstance(children, list) else [])
            if sizes.get(id(c), 0) > MAX_NODES and c.start_mark.index >= node.start_mark.index
        ]
        if not later:
            return node
        node = later[0]


# PyYAML's scanner takes time quadratic in a run of flow openers ("[[[[…"): refused before scanning.
_OPENERS = re.compile(r"(?:[\[{][ \t]*){" + str(MAX_DEPTH + 1) + "}")


def _parse(path: Path, text: str) -> tuple[yaml.Node | None, Any]:
    if (run := _OPENERS.search(text)) is not None:
        line = text.count("\n", 0, run.end()) + 1
        raise BadExpectations(
            f"{path}:{line}: too large to be an expectations file: nested deeper than {MAX_DEPTH} levels"
        )
    loader = _LimitedLoader(text)
    try:
        root = loader.get_single_node()
        sizes: dict[int, int] = {}
        if root is not None and _expanded_size(root, sizes) > MAX_NODES:
            raise _TooMuch(_line_of(_culprit(root, sizes)), f"expands to more than {MAX_NODES:,} nodes (aliases)")
        return root, loader.construct_document(root) if root is not None else None
    except _TooMuch as exc:
        raise BadExpectations(f"{path}:{exc.line}: too large to be an expectations file: {exc}") from None
    finally:
        loader.dispose()


def _read(path: Path) -> str:
    with path.open("rb") as f:  # an OSError is the caller's: a file that cannot be read (status 3)
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise BadExpectations(f"{path}: larger than {MAX_BYTES >> 20} MiB; not an expectations file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BadExpectations(f"{path}:{line}: not UTF-8 text") from None


def load(path: Path, known: set[str]) -> Expectations:
    text = _read(path)
    try:
        root, data = _parse(path, text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise BadExpectations(f"{path}{where}: not valid YAML: {problem}") from None
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise BadExpectations(f"{path}:1: expected a mapping with 'version: 1' and an 'expect' list")
    nodes = {key.value: value for key, value in root.value}
    if data.get("version") != 1:
        line = _line_of(nodes["version"]) if "version" in nodes else 1
        raise BadExpectations(f"{path}:{line}: 'version' must be 1")
    unknown = set(data) - {"version", "expect", "server"}
    if unknown:
        key = sorted(unknown)[0]
        line = next(_line_of(k) for k, _ in root.value if k.value == key)
        raise BadExpectations(f"{path}:{line}: unknown key {key!r} (expected 'version', 'expect' and 'server')")
    items, item_nodes = data.get("expect"), nodes.get("expect")
    if not isinstance(items, list) or not isinstance(item_nodes, yaml.SequenceNode) or not items:
        line = _line_of(item_nodes) if item_nodes is not None else 1
        raise BadExpectations(f"{path}:{line}: 'expect' must be a non-empty list of checks")
    found = []
    for item, node in zip(items, item_nodes.value, strict=True):
        line = _line_of(node)
        if not isinstance(item, dict) or len(item) != 1:
            raise BadExpectations(f"{path}:{line}: each check is one 'name: argument' pair")
        ((name, arg),) = item.items()
        if name not in known:
            raise BadExpectations(f"{path}:{line}: unknown check {name!r} (known: {', '.join(sorted(known))})")
        found.append(Expectation(str(name), arg, line))
    server = data.get("server")
    return Expectations(found, str(server) if server is not None else None)
