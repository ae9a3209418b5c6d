"""Following a growing recording (``wiretap.recording.follow``): whole lines only, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiretap.recording.follow import complete_lines, open_if_started, tail_lines, wait_for_header

HEADER = b'{"kind":"header","format":1,"transport":"stdio","name":"s"}\n'
EVENT = b'{"t":0.5,"kind":"stderr","text":"hi"}\n'


def test_complete_lines_leave_a_partial_last_line_unread_until_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(EVENT + EVENT[:10])
    with path.open("rb") as file:
        assert complete_lines(file) == [EVENT]
        assert file.tell() == len(EVENT)
        assert complete_lines(file) == []
        with path.open("ab") as writer:
            writer.write(EVENT[10:] + EVENT)
        assert complete_lines(file) == [EVENT, EVENT]
        assert file.tell() == 3 * len(EVENT)


def test_complete_lines_stop_at_their_limit_and_go_on_from_there(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(EVENT * 5)
    with path.open("rb") as file:
        assert complete_lines(file, limit=2) == [EVENT, EVENT]
        assert complete_lines(file, limit=2) == [EVENT, EVENT]
        assert complete_lines(file, limit=2) == [EVENT]


def test_tail_lines_give_every_line_then_the_partial_rest_once_stopped(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(EVENT + EVENT[:7])
    checks = []

    def stop() -> bool:
        checks.append(True)
        if len(checks) == 1:
            with path.open("ab") as writer:
                writer.write(EVENT[7:] + b'{"t":1')
            return False
        return True

    with path.open("rb") as file:
        got = list(tail_lines(file, stop=stop, poll=0))
    assert got == [EVENT, EVENT, b'{"t":1']
    assert b"".join(got) == path.read_bytes()


def test_a_recording_is_not_started_until_its_header_line_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    assert open_if_started(path) is None
    path.write_bytes(HEADER[:-1])
    assert open_if_started(path) is None
    path.write_bytes(HEADER + EVENT)
    reader = open_if_started(path)
    assert reader is not None
    with reader:
        assert reader.header["name"] == "s"
        assert [e["text"] for e in reader.events(complete_lines(reader.file))] == ["hi"]


def test_waiting_for_the_header_of_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"missing\.jsonl"):
        wait_for_header(tmp_path / "missing.jsonl")
