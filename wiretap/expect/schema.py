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


def load(path: Path, known: set[str]) -> Expectations:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise BadExpectations(f"{path}: not UTF-8 text, not an expectations file") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
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
