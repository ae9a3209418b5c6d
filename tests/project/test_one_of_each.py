"""One implementation of each wire concept: request ids become keys in ``wire.jsonrpc`` (``id_key``),
responses pair with requests there (``Pairing``), and a growing recording is followed by
``recording.follow``, and an untrusted JSON value is read as an object by ``wire.json_values.as_dict``.
A second copy elsewhere fails here: an id-key function, a pairing map (requests waiting per direction
and id, or a queue of them per id), a tail built on a header line read by hand, or a function of one
value that returns it if it is a dict and else an empty one.

``KNOWN`` lists the copies still to move onto the one implementation; an entry that no longer occurs
fails as well, so the list only shrinks.
"""

from __future__ import annotations

import ast

from support import paths

PACKAGE = paths.REPO / "wiretap"
ID_KEY_NAMES = {"_id", "_key", "id_key", "canonical_id", "key_of_id"}

KNOWN: set[tuple[str, str, str]] = set()


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


def _keys_an_id(node: ast.AST, keyed: set[str]) -> bool:
    """Whether an expression is an id key: a call of an id-key function, or a name one was stored in."""
    if isinstance(node, ast.Name):
        return node.id in keyed
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in ID_KEY_NAMES
    return False


def _pairing_maps(module: ast.Module) -> list[str]:
    """Maps that pair by request id: keyed by (direction, id key), or holding a list of waiters per id key."""
    keyed = {
        target.id
        for node in ast.walk(module)
        if isinstance(node, ast.Assign) and _keys_an_id(node.value, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Subscript):
            owner, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr not in {"get", "pop", "setdefault"}:
                continue
            owner, key = node.func.value, node.args[0]
            queue = node.func.attr == "setdefault" and len(node.args) == 2 and isinstance(node.args[1], ast.List)
            if queue and _keys_an_id(key, keyed):
                found.append(ast.unparse(owner))
                continue
        else:
            continue
        if isinstance(key, ast.Tuple) and any(_keys_an_id(element, keyed) for element in key.elts):
            found.append(ast.unparse(owner))
    return found


def _tails(module: ast.Module) -> list[str]:
    """A reader built on a first line read by hand: a tail of a recording still being written."""
    return [
        "RecordingReader"
        for node in ast.walk(module)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "RecordingReader" and len(node.args) >= 3
    ]


def _object_readers(module: ast.Module) -> list[str]:
    """Functions of one value whose whole body is ``return value if isinstance(value, dict) else {}``."""
    found = []
    for node in ast.walk(module):
        if not isinstance(node, ast.FunctionDef) or len(node.args.args) != 1 or len(node.body) != 1:
            continue
        body = node.body[0]
        if isinstance(body, ast.Return) and isinstance(body.value, ast.IfExp):
            test, orelse = body.value.test, body.value.orelse
            checks_dict = isinstance(test, ast.Call) and ast.unparse(test).endswith(", dict)")
            if checks_dict and isinstance(orelse, ast.Dict) and not orelse.keys:
                found.append(node.name)
    return found


def copies() -> set[tuple[str, str, str]]:
    found = set()
    for name, module in _modules():
        if not name.startswith("wire/"):
            found |= {("id key", name, what) for what in _id_keys(module)}
            found |= {("pairing", name, what) for what in _pairing_maps(module)}
        if not name.startswith("recording/"):
            found |= {("tail", name, what) for what in _tails(module)}
        if name != "wire/json_values.py":
            found |= {("object reader", name, what) for what in _object_readers(module)}
    return found


def test_no_module_outside_wire_keys_or_pairs_ids_and_none_outside_recording_tails_a_recording() -> None:
    assert copies() - KNOWN == set()


def test_every_known_copy_still_exists_so_the_list_only_shrinks() -> None:
    assert KNOWN - copies() == set()


def test_the_guard_finds_an_id_key_written_again() -> None:
    module = ast.parse("import json\ndef _id(value):\n    return json.dumps(value, sort_keys=True)\n")
    assert _id_keys(module) == ["_id"]


def test_the_guard_finds_a_pairing_map_keyed_by_direction_and_id() -> None:
    source = "pending[(direction, canonical_id(msg['id']))] = span\nanswered = pending.pop((d, _key(i)), None)\n"
    module = ast.parse(source)
    assert _pairing_maps(module) == ["pending", "pending"]


def test_the_guard_finds_a_queue_of_waiting_requests_per_id() -> None:
    module = ast.parse("def f(self, m):\n    key = id_key(m.get('id'))\n    self.open.setdefault(key, []).append(m)\n")
    assert _pairing_maps(module) == ["self.open"]


def test_the_guard_leaves_a_map_of_progress_tokens_alone() -> None:
    module = ast.parse("by_token[id_key(token)] = watch\nby_token.pop(id_key(token), None)\n")
    assert _pairing_maps(module) == []


def test_the_guard_finds_a_tail_written_again() -> None:
    module = ast.parse("first = f.readline()\nreader = RecordingReader(f, path, first)\n")
    assert _tails(module) == ["RecordingReader"]


def test_the_guard_finds_an_object_reader_written_again() -> None:
    module = ast.parse("def _d(value):\n    return value if isinstance(value, dict) else {}\n")
    assert _object_readers(module) == ["_d"]


def test_the_guard_leaves_a_reader_with_a_default_alone() -> None:
    module = ast.parse("def f(value):\n    return value if isinstance(value, dict) else {'a': 1}\n")
    assert _object_readers(module) == []
