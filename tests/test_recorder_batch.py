"""The recorder's batch path: a chunk's clean JSON lines are checked for secrets once and written as
lines without building their events. It must write exactly what the message-by-message path writes."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiretap.recording import channel, streams
from wiretap.recording.channel import Op, RecordDecoder
from wiretap.recording.sink import Sink
from wiretap.recording.spec import StreamSpec
from wiretap.recording.writer import RecordingWriter
from wiretap.wire import redact
from wiretap.wire.messages import are_verbatim_json, is_verbatim_json, record_frame

SECRET = "ghp_" + "a1B2c3D4e5" * 4
LINES = [
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"lorem ipsum"}]}}',
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + SECRET.encode() + b'"}}',
    b'{"jsonrpc":"2.0","id":2,"params":{"api_key":"abcDEF123456789xyz"}}',
    b'{"a":"\\ud800","token":"zzzzyyyyxxxx1234"}',
    b'{"a":"\\ud800"}',
    b"\xff\xfe not UTF-8",
    b"not JSON at all, token=abcd1234efgh",
    b"plain words",
    b"",
    b"   ",
    b'{"x":1}\r',
    b' {"x":1} ',
    b'\r{"x":1}',
    b"1e400",
    b"NaN",
    b"[" * 995 + b"]" * 995,
    b"[" * 1200 + b"]" * 1200,
    b'{"k\\u0065y":"abcdef123456"}',
    b'{"to\xe2\x84\xaaen":"abcdef123456"}',
    b'{"\xc4\xb0":"x"}',
    b'{"url":"https://user:pass@host/x?token=abc123def456"}',
    b'{"big":"' + b"lorem ipsum " * 9000 + b'"}',
    b'{"big":"' + b"lorem ipsum " * 9000 + SECRET.encode() + b'"}',
    b'{"n":12345678901234567890123456789}',
    b'{"a":1}{"b":2}',
    b'{"a":"\x01"}',
    b'"just a string"',
    b'{"s":"caf\xc3\xa9 AKIAABCDEFGHIJKLMNOP"}',
    b'{"TOKEN":"Zq9xWv8uTs7r"}',
]


def record(tmp_path: Path, chunks: list[bytes], *, redacted: bool = True, name: str = "rec.jsonl") -> bytes:
    """Chunks through a Sink (the recorder process's code, in this process), and the file it wrote."""
    records = [
        channel.encode_json(Op.HEADER, 0, 0.0, {"kind": "header", "redacted": redacted}),
        channel.encode_json(Op.OPEN, 1, 0.0, StreamSpec("line", {"dir": "s2c"}).to_dict()),
        *(channel.encode(Op.DATA, 1, 0.001 * (n + 1), chunk) for n, chunk in enumerate(chunks)),
        channel.encode(Op.CLOSED, 1, 0.001 * (len(chunks) + 1)),
    ]
    path = tmp_path / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    sink = Sink(RecordingWriter(fd, path))
    for rec in RecordDecoder().feed(b"".join(records)):
        sink.record_safely(rec)
    sink.writer.flush()
    os.close(fd)
    return path.read_bytes()


def cut(data: bytes, sizes: list[int]) -> list[bytes]:
    chunks, at = [], 0
    for size in sizes:
        chunks.append(data[at : at + size])
        at += size
    return [*chunks, data[at:]] if at < len(data) else chunks


@pytest.fixture
def one_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact._DEFAULT, "_key", b"k" * 16)


def message_by_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """The path every message took before the batch path: each one checked and encoded on its own."""
    monkeypatch.setattr(streams, "is_verbatim_json", lambda frame: False)
    monkeypatch.setattr(streams, "are_verbatim_json", lambda frames: False)
    monkeypatch.setattr(streams, "may_hold_token_in", lambda data: True)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=40),
    st.lists(st.sampled_from([1, 2, 17, 100, 4096, 65536]), max_size=30),
    st.booleans(),
)
def test_the_batch_path_writes_the_same_bytes_as_the_message_by_message_path(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], sizes: list[int], redacted: bool
) -> None:
    tmp_path = tmp_path_factory.mktemp("batch")
    data = b"\n".join(lines) + b"\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redact._DEFAULT, "_key", b"k" * 16)
        fast = record(tmp_path, cut(data, sizes), redacted=redacted, name="fast.jsonl")
        message_by_message(patch)
        slow = record(tmp_path, cut(data, sizes), redacted=redacted, name="slow.jsonl")
    assert fast == slow


@pytest.mark.usefixtures("one_key")
def test_a_batch_with_a_secret_bad_bytes_and_a_split_line_in_the_middle_records_every_message(tmp_path: Path) -> None:
    clean = [b'{"jsonrpc":"2.0","method":"n","params":{"i":%d,"text":"lorem ipsum"}}' % i for i in range(300)]
    lines = list(clean)
    lines[100] = b'{"jsonrpc":"2.0","id":7,"params":{"text":"use ' + SECRET.encode() + b'"}}'
    lines[150] = b'{"jsonrpc":"2.0","id":8,"params":{"text":"caf\xe9"}}'  # invalid UTF-8
    lines[160] = b'{"jsonrpc":"2.0","id":9,"params":{"text":"\\udc00"}}'  # a lone surrogate escape
    lines[170] = b"Traceback: not JSON"
    data = b"\n".join(lines) + b"\n"
    split_at = data.index(b'"i":200') + 3  # the chunk ends inside message 200
    out = record(tmp_path, [data[:split_at], data[split_at:]])
    events = [json.loads(line) for line in out.splitlines()]
    messages = [e for e in events if e["kind"] == "message"]
    assert len(messages) == 300
    assert [e["size"] for e in messages] == [len(line) for line in lines]
    assert sum(e["size"] for e in messages) + 300 == len(data)
    assert SECRET.encode() not in out and messages[100]["redacted"] == 1
    assert "[redacted:" in messages[100]["msg"]["params"]["text"]
    assert messages[150]["raw_base64"] and "msg" not in messages[150]
    assert messages[160]["msg"]["params"]["text"] == "\udc00"
    assert messages[170]["raw"] == "Traceback: not JSON"
    assert messages[200]["msg"]["params"]["i"] == 200 and messages[200]["t"] == 0.002
    others = [i for i in range(300) if i not in (100, 150, 160, 170)]
    assert all(messages[i]["msg"] == json.loads(lines[i]) for i in others)
    # A clean JSON message is recorded as the bytes that passed, not re-serialized.
    assert all(b',"msg":' + lines[i] + b"}\n" in out for i in others)
    assert [e["kind"] for e in events if e["kind"] != "message"] == ["header", "eof"]


@pytest.mark.usefixtures("one_key")
def test_a_secret_split_across_two_chunks_is_redacted(tmp_path: Path) -> None:
    line = b'{"jsonrpc":"2.0","method":"n","params":{"text":"' + SECRET.encode() + b'"}}\n'
    at = line.index(b"ghp_") + 2  # "gh" in one chunk, "p_..." in the next
    out = record(tmp_path, [b'{"a":1}\n' + line[:at], line[at:] + b'{"b":2}\n'])
    assert SECRET.encode() not in out
    assert [json.loads(x).get("redacted") for x in out.splitlines()[1:4]] == [None, 1, None]


def _strict(frame: bytes) -> bool:
    got: Any = record_frame(frame, redact=False)
    return got.msg_bytes is not None and set(got.fields) == {"size"}


_PIECES = [b"{", b"}", b"[", b"]", b'"', b"\\", b"u", b"d800", b"00", b",", b":", b"1", b"0", b"-", b".", b"e",
           b"true", b"null", b"NaN", b" ", b"\t", b"\r", b"\x0c", b"\x00", b"\xc3\xa9", b"\xe9", b"\xed\xa0\x80",
           b"\xef\xbb\xbf", b"a", b'"a"', b"\xf4\x90\x80\x80"]  # fmt: skip


@settings(max_examples=2000)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map(b"".join))
def test_the_fast_json_reading_says_what_the_full_one_says(frame: bytes) -> None:
    assert is_verbatim_json(frame) == _strict(frame)


@pytest.mark.parametrize("depth", [10, 500, 799, 800, 990, 999, 1000, 1001, 5000])
def test_a_deep_value_is_judged_by_the_stdlib_as_before(depth: int) -> None:
    frame = b'{"a":' * depth + b"1" + b"}" * depth
    assert is_verbatim_json(frame) == _strict(frame)


@settings(max_examples=1500)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=8).map(b"".join), min_size=1, max_size=5))
def test_one_pass_over_many_frames_says_what_each_frame_alone_says(frames: list[bytes]) -> None:
    frames = [f.replace(b"\n", b"") for f in frames]
    if are_verbatim_json(frames):
        assert all(_strict(f) for f in frames)


def test_one_pass_over_many_frames_is_not_fooled_by_frames_that_join_into_json() -> None:
    for frames in ([b'{"a":', b"1}"], [b"1] [2", b"3"], [b"1,2"], [b""], [b"1 2", b"[]"], [b'{"a":1}', b"{"]):
        assert not are_verbatim_json(frames), frames
    assert are_verbatim_json([b'{"a":1}', b" 5 ", b"[]", b'"x"'])


def test_one_pass_over_many_frames_refuses_bytes_that_are_not_utf8() -> None:
    for bad in (b'"caf\xe9"', b'"\xed\xa0\x80"', b'{"a":"\xf4\x90\x80\x80"}', b'"\xc3"', b'["\xff"]'):
        assert not are_verbatim_json([b'{"a":1}', bad]), bad
    assert are_verbatim_json([b'{"a":1}', b'"caf\xc3\xa9"'])


def test_a_clean_flood_with_one_line_that_is_not_utf8_records_that_line_raw(tmp_path: Path) -> None:
    lines = [b'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}' % i for i in range(50)]
    lines[20] = b'{"jsonrpc":"2.0","method":"n","params":{"text":"caf\xe9"}}'
    out = record(tmp_path, [b"\n".join(lines) + b"\n"])
    messages = [e for e in map(json.loads, out.splitlines()) if e["kind"] == "message"]
    assert len(messages) == 50
    assert base64.b64decode(messages[20]["raw_base64"]) == lines[20] and "msg" not in messages[20]
    assert all(messages[i]["msg"]["params"]["i"] == i for i in range(50) if i != 20)
