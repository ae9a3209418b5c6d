"""Readers never crash and never hold what they skip: deep nesting, huge lines, floods of garbage."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from wiretap.recording import reader
from wiretap.recording.events import Header
from wiretap.recording.reader import read_all

MiB = 1 << 20


def event_line(n: int, msg: object | None = None) -> bytes:
    fields: dict[str, object] = {"t": n / 1000, "kind": "message", "dir": "c2s", "size": 10}
    fields["msg"] = msg if msg is not None else {"jsonrpc": "2.0", "id": n, "method": "ping"}
    return json.dumps(fields).encode() + b"\n"


def nested(depth: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * depth + b"]" * depth + b"}"


def write_recording(path: Path, middle: list[bytes]) -> None:
    header = json.dumps(Header(transport="stdio", name="t", argv=["srv"]).to_dict()).encode() + b"\n"
    with path.open("wb") as f:
        f.write(header + event_line(1))
        for line in middle:
            f.write(line)
        f.write(event_line(2) + b'{"t":0.003,"kind":"end","written":4,"lost":0}\n')


def deep_line(depth: int) -> bytes:
    return b'{"t":0.0015,"kind":"message","dir":"s2c","size":1,"msg":' + nested(depth) + b"}\n"


@pytest.mark.parametrize("command", [["show"], ["report"], ["report", "-f", "json"], ["export", "-f", "svg"]])
def test_messages_nested_thousands_deep_are_skipped_and_counted_not_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "deep.jsonl"
    write_recording(path, [deep_line(900), deep_line(10_000)])
    proc = subprocess.run(
        [sys.executable, "-m", "wiretap", *command, str(path)], capture_output=True, timeout=60, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


def test_the_reader_counts_too_deep_lines_and_reads_on(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    write_recording(path, [deep_line(900), deep_line(10_000), deep_line(150)])
    _, events, skipped = read_all(path)
    assert [e.get("msg", {}).get("id") for e in events] == [1, 1, 2, None]
    assert len(skipped.lines) == 2 and "nested deeper than" in skipped.describe()


def test_a_line_longer_than_the_limit_is_skipped_without_being_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "MAX_LINE", 1 * MiB)
    path = tmp_path / "huge.jsonl"
    write_recording(path, [b"x" * (20 * MiB) + b"\n", event_line(5, {"ok": "x" * (MiB // 2)})])
    tracemalloc.start()
    try:
        _, events, skipped = read_all(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [e["msg"].get("id", "big") for e in events if "msg" in e] == [1, "big", 2]
    assert len(skipped.lines) == 1 and "longer than 1 MiB" in skipped.describe()
    assert peak < 6 * MiB, f"held {peak} bytes reading past a 20 MiB line"


def test_a_flood_of_garbage_lines_is_counted_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    write_recording(path, [b"garbage %d\n" % n for n in range(100_000)])
    _, events, skipped = read_all(path)
    assert [e.get("kind") for e in events] == ["message", "message", "end"]
    assert len(skipped.lines) == 100_000 and "(and 99995 more)" in skipped.describe()
    assert list.__len__(skipped.lines) <= 100  # examples kept; the rest only counted


ODD_JSON = [
    b'{"t":0.1,"kind":"message","dir":"c2s","msg":{"id":1,"method":"x","params":{"a":NaN,"b":-Infinity}}}\n',
    b'{"t":0.2,"kind":"message","dir":"c2s","msg":{"id":2,"method":"x","params":{"big":' + b"9" * 40 + b"}}}\n",
    b'{"t":0.21,"kind":"message","dir":"c2s","msg":{"id":2,"method":"x","params":{"a":18446744073709551616}}}\n',
    b'{"t":0.22,"kind":"message","dir":"c2s","msg":{"id":2,"method":"x","params":{"a":-9223372036854775809}}}\n',
    b'{"t":0.3,"kind":"message","dir":"c2s","msg":{"id":3,"method":"x","params":{"s":"\\ud800 alone"}}}\n',
    b'{"t":0.4,"kind":"message","dir":"c2s","msg":{"id":4,"method":"x","params":{"f":1e400,"g":-0.0}}}\n',
    b'{"t":0.5,"kind":"message","dir":"c2s","msg":{"id":5,"method":"x","params":{"k":1,"k":2}}}\n',
    b'{"t":0.6,"kind":"message","dir":"c2s","msg":{"id":6,"method":"\\u0074ools/call","params":{"x":"\\u00e9"}}}\n',
    b'{"t":0.7,"kind":"message","dir":"c2s","msg":{"id":7,"method":"x"}} trailing\n',
    b"\xff\xfe not utf-8\n",
    deep_line(150),
]


def test_lines_json_reads_in_its_own_way_are_read_as_json_reads_them(tmp_path: Path) -> None:
    """msgspec reads most lines; json reads what msgspec refuses (NaN, 1e400, lone surrogates), and
    both read integers past 64 bits, duplicate keys and escapes alike."""
    path = tmp_path / "odd.jsonl"
    write_recording(path, ODD_JSON)
    _, events, skipped = read_all(path)
    expected = []
    for line in [event_line(1), *ODD_JSON, event_line(2), b'{"t":0.003,"kind":"end","written":4,"lost":0}\n']:
        try:
            expected.append(json.loads(line))
        except ValueError:
            continue
    assert repr(events) == repr(expected)
    assert [why for _, why in skipped.lines] == ["not JSON", "not JSON"]


def test_a_reader_says_where_each_events_line_starts(tmp_path: Path) -> None:
    path = tmp_path / "places.jsonl"
    write_recording(path, [b"not json\n", b"\n", event_line(7)])
    data = path.read_bytes()
    with reader.open_recording(path) as opened:
        for event in opened.events():
            assert opened.line_at is not None
            assert data[opened.line_at : opened.line_at + len(opened.line)] == opened.line
            assert json.loads(opened.line) == event
