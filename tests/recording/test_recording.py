"""Writing and reading recordings: the on-disk contract."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.eventually import eventually

from wiretap.recording.complete import wait_released, writers_gone
from wiretap.recording.events import FORMAT_VERSION, Direction, Header, Kind
from wiretap.recording.follow import tail_lines
from wiretap.recording.migrate import UnsupportedFormat
from wiretap.recording.reader import NotARecording, open_recording, read_all
from wiretap.recording.recorder import Recorder
from wiretap.recording.writer import RecordingWriter, create_unique, encode_event
from wiretap.transports.stdio import open_stdio_streams


def make_recorder(path: Path) -> Recorder:
    fd, path = create_unique(path)
    recorder = Recorder(RecordingWriter(fd, path), Header(transport="stdio", name="t", argv=["srv"]))
    open_stdio_streams(recorder)
    return recorder


def test_the_recorder_frames_chunks_into_message_events(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = make_recorder(path)
    recorder.data("c2s", b'{"jsonrpc":"2.0","id":1,')
    recorder.data("c2s", b'"method":"tools/list"}\n{"jsonrpc"')
    recorder.data("s2c", b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n')
    recorder.data("stderr", b"booting\n")
    recorder.closed("c2s")
    recorder.event(Kind.EXIT, code=0, status=0)
    recorder.close()
    header, events, skipped = read_all(path)
    assert header["format"] == FORMAT_VERSION and not skipped
    assert [(e["kind"], e.get("dir")) for e in events] == [
        ("message", "c2s"),
        ("message", "s2c"),
        ("stderr", None),
        ("message", "c2s"),
        ("eof", "c2s"),
        ("exit", None),
        ("end", None),
    ]
    assert events[0]["msg"] == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert events[3] == {
        "t": events[3]["t"],
        "kind": "message",
        "dir": "c2s",
        "size": 10,
        "raw": '{"jsonrpc"',
        "eol": "",
    }
    assert events[-1]["written"] == len(events) + 1 and events[-1]["lost"] == 0


def test_every_line_of_a_recording_is_json_that_jq_can_read(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = make_recorder(path)
    recorder.data("c2s", b'{"a":"\xe2\x80\xa8 line separator","b":1e400}\n\xff\n')
    recorder.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    for line in lines[:-1]:
        assert isinstance(json.loads(line), dict)


def test_events_reach_the_file_as_they_happen_not_at_close(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = make_recorder(path)
    recorder.data("c2s", b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    eventually(lambda: b"notifications/initialized" in path.read_bytes(), "the event in the file before close")
    recorder.close()


def test_a_truncated_last_line_is_skipped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = make_recorder(path)
    recorder.data("c2s", b'{"jsonrpc":"2.0","method":"a"}\n')
    recorder.close()
    with path.open("ab") as f:
        f.write(b'{"t":9.0,"kind":"mess')
    _header, events, skipped = read_all(path)
    assert [e["kind"] for e in events] == ["message", "end"]
    assert skipped.truncated_tail and "truncated last line" in skipped.describe()


def test_a_malformed_line_in_the_middle_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    header = Header(transport="stdio", name="t", argv=[]).to_dict()
    path.write_bytes(
        b"".join(
            [
                encode_event(header)[0],
                b"garbage\n",
                b"[1,2]\n",
                encode_event({"t": 1.0, "kind": "stderr", "text": "x"})[0],
            ]
        )
    )
    _, events, skipped = read_all(path)
    assert events == [{"t": 1.0, "kind": "stderr", "text": "x"}]
    assert [n for n, _ in skipped.lines] == [2, 3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b'{"jsonrpc":"2.0"}\n', "not a wiretap recording"),
        (b'{"kind":"header","format":99}\n', "newer than this wiretap reads"),
    ],
)
def test_files_that_are_not_readable_recordings_get_a_one_line_reason(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises((NotARecording, UnsupportedFormat), match=message):
        open_recording(path)


def test_a_write_failure_is_counted_reported_once_and_marked_when_writes_work_again(tmp_path: Path) -> None:
    class Notes:
        text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    path = tmp_path / "rec.jsonl"
    notes = Notes()
    good = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    full = os.open("/dev/full", os.O_WRONLY)
    writer = RecordingWriter(full, path, stderr=notes)  # type: ignore[arg-type]
    for t in (1.0, 2.0):
        writer.add(t, encode_event({"t": t, "kind": "stderr", "text": "lost"}))
        writer.flush()
    assert writer.lost == 2 and notes.text.count("RECORDING FAILED") == 1
    os.dup2(good, full)  # the disk has room again
    writer.add(3.0, encode_event({"t": 3.0, "kind": "stderr", "text": "kept"}))
    writer.close({"t": 3.0, "kind": "end"})
    os.close(good)
    lines = [json.loads(line) for line in path.read_bytes().splitlines() if line]
    assert lines[0]["error"] == "recording_gap" and lines[0]["lost"] == 2 and lines[0]["since"] == 1.0
    assert lines[1]["text"] == "kept"
    assert lines[2] == {"t": 3.0, "kind": "end", "written": 2, "lost": 2}


def test_tailing_yields_lines_only_once_they_are_complete(tmp_path: Path) -> None:
    path = tmp_path / "grow.jsonl"
    path.write_bytes(b"one\ntw")
    seen: list[bytes] = []
    done = threading.Event()
    with path.open("rb") as f:

        def reader() -> None:
            for line in tail_lines(f, stop=done.is_set, poll=0.01):
                seen.append(line)

        thread = threading.Thread(target=reader)
        thread.start()
        eventually(lambda: seen == [b"one\n"], "the whole first line")
        with path.open("ab") as w:
            w.write(b"o\n")
        # The partial "tw" was held back: what follows is the whole second line, not "tw" then "o".
        eventually(lambda: len(seen) == 2, "the second line once it is whole")
        done.set()
        thread.join(5)
    assert seen == [b"one\n", b"two\n"]


def test_a_recording_is_released_only_when_every_process_writing_it_is_gone(tmp_path: Path) -> None:
    fd, path = create_unique(tmp_path / "held.jsonl")
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, pass_fds=(fd,)
    )
    assert not writers_gone(path)
    os.close(fd)  # the relay let go; its recorder still holds the same descriptor
    assert not writers_gone(path)
    assert child.stdin is not None
    child.stdin.close()
    child.wait(10)
    assert wait_released(path, 10)


class FullPipe(io.StringIO):
    """A stderr that is a full non-blocking pipe: every write fails."""

    def write(self, text: str) -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")


def test_a_warning_that_finds_stderr_full_never_stops_the_traffic(tmp_path: Path) -> None:
    fd, path = create_unique(tmp_path / "full.jsonl")
    recorder = Recorder(RecordingWriter(fd, path), Header("stdio", "full", []), stderr=FullPipe())
    open_stdio_streams(recorder)
    assert recorder._proc is not None
    recorder._proc.kill()  # the recorder dies: wiretap says so on a stderr that takes nothing
    recorder._proc.wait()
    for _ in range(3):
        recorder.data(Direction.C2S, b'{"jsonrpc":"2.0","method":"ping"}\n')
    recorder.close(wait=0.0)
    events = [json.loads(line) for line in path.read_text().splitlines() if line]
    assert any(e.get("error") == "recorder_died" for e in events)
