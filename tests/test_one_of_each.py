"""One implementation of each wire concept: request ids become keys in ``wire.jsonrpc`` (``id_key``),
responses pair with requests there (``Pairing``), and a growing recording is followed by
``recording.follow``. A second copy elsewhere fails here.

``KNOWN`` lists the copies still to move onto the one implementation; an entry that no longer occurs
fails as well, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "wiretap"
ID_KEY_NAMES = {"_id", "_key", "id_key", "canonical_id", "key_of_id"}

KNOWN = {
    ("id key", "ui/index.py", "_key"),
    ("id key", "otel/attributes.py", "canonical_id"),
    ("tail", "ui/index.py", "RecordingReader"),
    ("tail", "otel/follow.py", "RecordingReader"),
}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(PACKAGE)), ast.parse(p.read_text())) for p in sorted(PACKAGE.rglob("*.py"))]


def _id_keys(module: ast.Module) -> list[str]:
    """Functions of one value, named like an id key, that turn it into one (``json.dumps`` or its type)."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name in ID_KEY_NAMES and len(node.args.args) == 1:
            calls = {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}
            if calls & {"json.dumps", "type"} or any(isinstance(n, ast.JoinedStr) for n in ast.walk(node)):
                found.append(node.name)
    return found


def _tails(module: ast.Module) -> list[str]:
    """A reader built on a first line read by hand: a tail of a recording still being written."""
    return [
        "RecordingReader"
        for node in ast.walk(module)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "RecordingReader" and len(node.args) >= 3
    ]


def copies() -> set[tuple[str, str, str]]:
    found = set()
    for name, module in _modules():
        if not name.startswith("wire/"):
            found |= {("id key", name, what) for what in _id_keys(module)}
        if not name.startswith("recording/"):
            found |= {("tail", name, what) for what in _tails(module)}
    return found


def test_no_module_outside_wire_keys_ids_and_none_outside_recording_tails_a_recording() -> None:
    assert copies() - KNOWN == set()


def test_every_known_copy_still_exists_so_the_list_only_shrinks() -> None:
    assert KNOWN - copies() == set()


def test_the_guard_finds_an_id_key_written_again() -> None:
    module = ast.parse("import json\ndef _id(value):\n    return json.dumps(value, sort_keys=True)\n")
    assert _id_keys(module) == ["_id"]


def test_the_guard_finds_a_tail_written_again() -> None:
    module = ast.parse("first = f.readline()\nreader = RecordingReader(f, path, first)\n")
    assert _tails(module) == ["RecordingReader"]
