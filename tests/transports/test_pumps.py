"""The pump loop's promises about the descriptors it borrows: what it made non-blocking goes back as it
was, and never to a descriptor that has since taken the same number."""

from __future__ import annotations

import os
from collections.abc import Hashable

from wiretap.transports.pumps import LoopedPump, Pump, PumpLoop


class Received:
    """What a recorder is told, kept (the loop under test needs only these two calls)."""

    def __init__(self) -> None:
        self.data: list[bytes] = []
        self.ended: list[Hashable] = []

    def data_(self, _key: Hashable, data: bytes) -> None:
        self.data.append(data)

    def closed(self, key: Hashable) -> None:
        self.ended.append(key)


def test_a_lost_destination_whose_number_is_reused_after_its_end_keeps_the_new_descriptors_mode() -> None:
    src_r, src_w = os.pipe()
    dst_r, dst_w = os.pipe()
    os.close(dst_r)  # the client stopped reading: writing gets EPIPE
    received = Received()
    recorder = type("R", (), {"data": received.data_, "closed": received.closed})()
    pump = Pump(src_r, dst_w, "s2c", recorder)  # type: ignore[arg-type]
    lost: list[bool] = []
    reused: list[int] = []

    def closed_and_number_reused() -> None:
        os.close(dst_w)
        new_r, new_w = os.pipe()
        os.set_blocking(new_r, False)
        os.dup2(new_r, dst_w)  # what a SignalPipe made now would get: the lowest free number
        reused.extend((new_r, new_w))

    loop = PumpLoop([LoopedPump(pump, lambda: lost.append(True), closed_and_number_reused)])
    os.write(src_w, b'{"jsonrpc":"2.0","id":2,"result":{}}\n')
    os.close(src_w)
    try:
        loop.run()
        assert lost == [True] and received.data == [b'{"jsonrpc":"2.0","id":2,"result":{}}\n']
        assert received.ended == ["s2c"]
        assert os.get_blocking(dst_w) is False, "the loop set the descriptor that took the number to blocking"
    finally:
        for fd in (src_r, dst_w, *reused):
            os.close(fd)


def test_a_destination_that_stays_is_left_blocking_as_it_was_found() -> None:
    src_r, src_w = os.pipe()
    dst_r, dst_w = os.pipe()
    received = Received()
    recorder = type("R", (), {"data": received.data_, "closed": received.closed})()
    loop = PumpLoop([LoopedPump(Pump(src_r, dst_w, "c2s", recorder), lambda: None, None)])  # type: ignore[arg-type]
    assert os.get_blocking(dst_w) is False, "the loop writes a pipe without blocking"
    os.write(src_w, b"x" * 1000)
    os.close(src_w)
    try:
        loop.run()
        assert os.read(dst_r, 2000) == b"x" * 1000 and os.get_blocking(dst_w) is True
    finally:
        for fd in (src_r, dst_r, dst_w):
            os.close(fd)
