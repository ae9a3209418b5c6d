"""The recorder process keeps freed buffers of a few MiB for reuse (glibc), and gives memory back before
a huge line: what it records is the same either way."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_recorder_batch import record

from wiretap.recording import memory, streams
from wiretap.wire import redact


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
