"""The recorder records in the traffic's pauses: what it holds, for how long, and that it all comes out."""

from __future__ import annotations

import os
import threading

import pytest

from wiretap.recording.sink import HOLD_AT_MOST, HOLD_AT_MOST_BYTES, QUIET, Inbox, hold_for


def test_chunks_are_held_while_the_traffic_keeps_coming() -> None:
    assert hold_for(10.0, oldest=9.99, last=10.0, size=200, eof=False) == pytest.approx(QUIET)


def test_chunks_are_handed_out_once_the_traffic_has_paused() -> None:
    assert hold_for(10.0 + QUIET, oldest=9.9, last=10.0, size=200, eof=False) == 0.0


def test_a_stream_that_never_pauses_is_held_at_most_hold_at_most() -> None:
    oldest = 10.0
    last = oldest + HOLD_AT_MOST - QUIET / 10  # bytes keep arriving right up to the limit
    assert 0 < hold_for(last, oldest=oldest, last=last, size=1 << 20, eof=False) <= QUIET / 10 + 1e-9
    assert hold_for(oldest + HOLD_AT_MOST, oldest=oldest, last=last, size=1 << 20, eof=False) == 0.0


def test_a_backlog_of_hold_at_most_bytes_is_recorded_without_waiting_for_a_pause() -> None:
    assert hold_for(10.0, oldest=10.0, last=10.0, size=HOLD_AT_MOST_BYTES - 1, eof=False) > 0
    assert hold_for(10.0, oldest=10.0, last=10.0, size=HOLD_AT_MOST_BYTES, eof=False) == 0.0


def test_once_the_relay_is_gone_nothing_is_held() -> None:
    assert hold_for(10.0, oldest=10.0, last=10.0, size=1, eof=True) == 0.0


def _take_all(inbox: Inbox) -> list[bytes]:
    chunks = []
    while (chunk := inbox.take()) is not None:
        chunks.append(chunk)
    return chunks


def test_everything_the_pipe_held_comes_out_in_order_when_the_relay_ends() -> None:
    read_end, write_end = os.pipe()
    sent = [f"{i:06d}".encode() * 40 + b"\n" for i in range(2000)]
    writer = threading.Thread(target=lambda: [os.write(write_end, chunk) for chunk in sent])
    inbox = Inbox(read_end)
    writer.start()
    writer.join()
    os.close(write_end)
    assert b"".join(_take_all(inbox)) == b"".join(sent)
    os.close(read_end)


def test_bytes_from_a_relay_that_lives_on_are_handed_out_after_the_pause() -> None:
    read_end, write_end = os.pipe()
    inbox = Inbox(read_end)
    os.write(write_end, b'{"jsonrpc":"2.0","method":"ping"}\n')
    got: list[bytes | None] = []
    taker = threading.Thread(target=lambda: got.append(inbox.take()), daemon=True)
    taker.start()
    taker.join(30)  # the relay keeps its end open: only the pause can release the chunk
    assert got == [b'{"jsonrpc":"2.0","method":"ping"}\n']
    assert not inbox.ready()
    os.close(write_end)
    assert inbox.take() is None
    os.close(read_end)
