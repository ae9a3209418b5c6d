"""The recorder process keeps freed buffers of a few MiB for reuse (glibc), and gives memory back before
a huge line: what it records is the same either way."""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.recorder_runs import record
from support.taprun import run_tap

from wiretap.recording import memory, sink, streams
from wiretap.wire import redact
from wiretap.wire.framing import PREVIEW


@pytest.fixture(autouse=True)
def fresh_lookup() -> Iterator[None]:
    memory._glibc.cache_clear()
    yield
    memory._glibc.cache_clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_on_linux_the_allocator_takes_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIRETAP_PORTABLE", raising=False)
    assert memory.keep_buffers()
    memory.give_back()


def test_with_wiretap_portable_the_allocator_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIRETAP_PORTABLE", "1")
    assert not memory.keep_buffers()
    memory.give_back()  # does nothing, and does not fail


def test_a_huge_line_gives_memory_back_once_and_is_recorded_as_it_would_be_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redact._DEFAULT, "_key", b"k" * 16)
    lines = [b'{"big":"' + b"lorem ipsum " * 20_000 + b'"}', b'{"small":1}', b'{"t":"ghp_' + b"a1B2c3D4e5" * 4 + b'"}']
    data = b"\n".join(lines) * 2 + b"\n"
    chunks = [data[at : at + 65536] for at in range(0, len(data), 65536)]
    calls: list[int] = []
    monkeypatch.setattr(memory, "GIVE_BACK_AT", 200_000)  # the big line is 240 KB
    monkeypatch.setattr(streams.memory, "give_back", lambda: calls.append(1))
    given_back = record(tmp_path, chunks, name="given-back.jsonl")
    assert len(calls) == 2  # once for each of the two big lines
    monkeypatch.setattr(memory, "GIVE_BACK_AT", 1 << 40)
    kept = record(tmp_path, chunks, name="kept.jsonl")
    assert given_back == kept
    assert given_back.count(b"lorem ipsum " * 20_000) == 2 and b"ghp_" not in given_back


def test_a_line_over_the_message_limit_passes_whole_and_is_recorded_truncated_in_bounded_memory(
    tmp_path: Path,
) -> None:
    """A line that goes on past ``MESSAGE_LIMIT`` (64 MiB) is held up to it, then only counted: a 300 MiB
    line without a newline took the recorder to 1,541 MiB (5x the line) and a line no reader keeps."""
    mib, size = 1 << 20, streams.MESSAGE_LIMIT + (16 << 20)
    server = (
        "import sys\nout = sys.stdout.buffer\nblock = b'x' * (1 << 20)\n"
        f"for _ in range({size // mib}): out.write(block)\n"
        'out.write(b\'\\n{"jsonrpc":"2.0","method":"after"}\\n\')\n'
        f"for _ in range({size // mib}): out.write(block)\n"
    )
    run = run_tap(tmp_path / "rec.jsonl", [sys.executable, "-c", server], [])
    assert len(run.stdout) == 2 * size + len(b'\n{"jsonrpc":"2.0","method":"after"}\n')
    first, after, last = run.messages("s2c")
    for cut in (first, last):
        assert cut["truncated"] is True and cut["size"] == size and cut["raw"] == "x" * PREVIEW
    assert after["msg"] == {"jsonrpc": "2.0", "method": "after"}
    assert last["eol"] == ""
    notes = [e for e in run.events if e["kind"] == "error"]
    assert [e["error"] for e in notes] == ["truncated", "truncated"]
    end = run.events[-1]
    assert end["lost"] == 0
    # The documented bound: the recorder's inbox, full when the flood outruns it, plus one message at most
    # (and the interpreter). Holding these lines whole took it past 400 MiB.
    bound = sink.INBOX_LIMIT + streams.MESSAGE_LIMIT + (64 << 20)
    assert end["recorder_max_rss"] < bound, end["recorder_max_rss"] >> 20


def test_a_plain_body_over_the_message_limit_is_recorded_truncated_and_not_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "MESSAGE_LIMIT", 1 << 20)
    stream = streams.BodyStream({"dir": "c2s"}, redact=True)
    tracemalloc.start()
    try:
        for _ in range(48):
            assert list(stream.feed(0.0, b"y" * 65536)) == []
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (note, _), (message, _) = stream.close(1.0)
    assert note["error"] == "truncated" and note["message"].startswith("the message is over 1 MiB")
    assert message["truncated"] is True and message["size"] == 48 * 65536 and message["raw"] == "y" * PREVIEW
    assert held < (1 << 20) + 4 * 65536, "3 MiB fed; the limit and a read or two held"


def test_a_stderr_line_over_the_message_limit_keeps_its_first_bytes_and_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "MESSAGE_LIMIT", 1 << 20)
    stream = streams.StderrStream(redact=True)
    recorded = [event for read in range(40) for event, _ in stream.feed(float(read), b"z" * 65536)]
    recorded += [event for event, _ in stream.feed(40.0, b"\nbye\n")]
    assert recorded == [
        {"t": 40.0, "kind": "stderr", "text": "z" * PREVIEW, "truncated": True, "size": 40 * 65536},
        {"t": 40.0, "kind": "stderr", "text": "bye"},
    ]


def test_an_sse_event_over_the_message_limit_is_recorded_truncated_and_the_next_one_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "MESSAGE_LIMIT", 1 << 20)
    stream = streams.SSEStream({"dir": "s2c"}, redact=True)
    recorded = list(stream.feed(0.0, b"event: message\ndata: "))
    recorded += [item for read in range(32) for item in stream.feed(1.0, b"w" * 65536)]
    recorded += stream.feed(2.0, b'\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')
    (note, _), (cut, _), (after, after_json) = recorded
    assert note["error"] == "truncated"
    assert cut["truncated"] is True and cut["raw"] == "w" * PREVIEW and cut["sse"] == {"event": "message"}
    assert cut["size"] == len(b"event: message\ndata: ") + 32 * 65536 + 2
    assert after["kind"] == "message" and after_json == b'{"jsonrpc":"2.0","id":1,"result":{}}'
