"""The replay's index finds what asking every matcher of every recorded request finds (1 and 1.0 equal,
true and 1 apart, key order irrelevant, volatile keys ignored), the first unused match before a repeat."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from wiretap.replay.index import Index
from wiretap.replay.matchers import MATCHERS, Request
from wiretap.replay.script import Exchange
from wiretap.replay.volatile import Volatile

VOLATILE = Volatile()
RECORDED: list[tuple[str, dict[str, Any]]] = [
    ("tools/list", {}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    ("tools/call", {"name": "add", "arguments": {"a": True, "b": 2}}),
    ("tools/call", {"name": "add", "arguments": {"b": [1.5, {"x": None}], "a": 1}}),
    ("resources/read", {"uri": "file:///a", "_meta": {"progressToken": 4}}),
    ("tools/call", {"name": "when", "arguments": {"at": "2026-11-30T12:24:46.428Z"}}),
]
LIVE: list[tuple[str, dict[str, Any]]] = [
    *RECORDED,
    ("tools/call", {"arguments": {"b": 2.0, "a": 1.0}, "name": "add"}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": True}}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 3}}),
    ("resources/read", {"uri": "file:///a", "_meta": {"progressToken": "other"}}),
    ("resources/read", {"uri": "file:///b"}),
    ("tools/call", {"name": "when", "arguments": {"at": "2027-01-01T00:00:00Z"}}),
    ("tools/call", {"name": "add"}),
]


def exchanges() -> list[Exchange]:
    out = []
    for number, (method, params) in enumerate(RECORDED, 1):
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        out.append(Exchange(number, float(number), message, Request.of(message, VOLATILE, "/mcp")))
    return out


def live(method: str, params: dict[str, Any], number: int) -> Request:
    return Request.of({"id": number, "method": method, "params": params}, VOLATILE, "/mcp")


@pytest.mark.parametrize(
    "match_on",
    [("method", "params"), ("method", "name"), ("method", "arguments"), ("method", "name", "path"), ("method", "id")],
)
def test_the_index_finds_what_asking_every_matcher_finds_in_the_same_order(match_on: tuple[str, ...]) -> None:
    indexed, scanned = exchanges(), exchanges()
    by_key, by_scan = Index(indexed, match_on), Index(scanned, match_on)
    assert by_key.buckets is not None
    for number, (method, params) in itertools.islice(enumerate(itertools.cycle(LIVE)), 3 * len(LIVE)):
        request = live(method, params, number % 9)
        found, expected = by_key.find(request), by_scan._scan(request)
        assert (found is None) == (expected is None), (request, found, expected)
        if found is not None and expected is not None:
            assert (found[0].number, found[1]) == (expected[0].number, expected[1]), request
            found[0].used += 1
            expected[0].used += 1


def test_a_matcher_of_ones_own_makes_the_index_ask_every_matcher(tmp_path: Path) -> None:
    MATCHERS["always"] = lambda recorded, live: None
    try:
        index = Index(exchanges(), ("always",))
        assert index.buckets is None
        found = index.find(live("anything", {}, 1))
        assert found is not None and found[0].number == 1
    finally:
        del MATCHERS["always"]


def test_requests_whose_keys_hash_alike_are_told_apart_by_the_matchers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests are filed under a hash of their keys: where hashes collide, the matchers decide."""
    monkeypatch.setattr("wiretap.replay.index.key", lambda request, match_on: 0)
    indexed, scanned = exchanges(), exchanges()
    for exchange in indexed:
        exchange.key = 0
    by_key, by_scan = Index(indexed, ("method", "params")), Index(scanned, ("method", "params"))
    assert by_key.buckets is not None and list(by_key.buckets) == [0]
    for number, (method, params) in itertools.islice(enumerate(itertools.cycle(LIVE)), 3 * len(LIVE)):
        request = live(method, params, number % 9)
        found, expected = by_key.find(request), by_scan._scan(request)
        assert (found is None) == (expected is None), request
        if found is not None and expected is not None:
            assert (found[0].number, found[1]) == (expected[0].number, expected[1]), request
            found[0].used += 1
            expected[0].used += 1


PARAMS_TEXTS = [
    (b'{"a":1}', False),
    (b'{"_meta":{"progressToken":3},"a":1}', True),
    (b'{"_meta":{"progress\\u0054oken":3}}', True),
    (b'{"clientInfo":{"name":"x"}}', True),
    (b'{"io.modelcontextprotocol\\/clientInfo":{}}', True),
    (b'{"at":"2026-11-30T12:24:46.428Z"}', True),
    ('{"at":"\u0662\u0660\u0662\u0666-\u0661\u0661-\u0663\u0660T12:24"}'.encode(), True),  # Arabic-Indic digits
    (b'{"at":"2026-11-30 12:24"}', True),
    (b'{"at":"\\u0032026-11-30 12:24"}', True),
    (b'{"text":"no date - here: 12:24","n":1.0}', False),
]


@pytest.mark.parametrize(("text", "volatile_inside"), PARAMS_TEXTS)
def test_a_line_said_to_hold_nothing_volatile_is_left_alone_by_normalizing(text: bytes, volatile_inside: bool) -> None:
    line = b'{"t":1,"kind":"message","dir":"c2s","msg":{"id":1,"method":"x","params":' + text + b"}}"
    parsed = json.loads(line)["msg"]["params"]
    assert (VOLATILE.normalize(parsed) is not parsed) == volatile_inside
    for volatile in (VOLATILE, Volatile.with_extra(["a"]), Volatile(timestamps=False), Volatile.with_extra([""])):
        if volatile.leaves_alone(line):
            assert volatile.normalize(parsed) is parsed, volatile
    assert VOLATILE.leaves_alone(line) == (not volatile_inside)
