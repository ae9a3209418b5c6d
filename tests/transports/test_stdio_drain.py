"""After its server exits, the tap waits for what the server's pipes still hold, however late its pump
threads are scheduled, and leaves only a pipe that a grandchild holds open with nothing in it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from wiretap.transports.pumps import Pump
from wiretap.transports.stdio import StdioTap


class Seen:
    """Stands in for the recorder: what a pump handed over, and whether it saw the end."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.ended = False

    def data(self, stream: str, data: bytes) -> None:
        self.received += data

    def closed(self, stream: str) -> None:
        self.ended = True


def late_pump(src: int, seen: Seen, delay: float) -> tuple[threading.Thread, Pump]:
    """A pump that has been waiting for bytes a long time and whose thread runs ``delay`` late."""
    pump = Pump(src, None, "s2c", seen)  # type: ignore[arg-type]
    pump.waiting_since = time.monotonic() - 10.0

    def run() -> None:
        time.sleep(delay)
        pump.run(lambda: None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, pump


def test_the_last_bytes_a_server_wrote_before_exiting_are_passed_on_even_when_the_pump_runs_late(
    tmp_path: Path,
) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"jsonrpc":"2.0","id":9,"result":{}}\n')
    os.close(write_end)  # the server wrote its last answer and exited
    seen = Seen()
    thread, pump = late_pump(read_end, seen, delay=0.3)
    StdioTap.__new__(StdioTap)._drain([(thread, pump)])
    assert bytes(seen.received) == b'{"jsonrpc":"2.0","id":9,"result":{}}\n' and seen.ended
    os.close(read_end)


def test_a_pipe_a_grandchild_holds_open_with_nothing_in_it_is_left_behind() -> None:
    read_end, write_end = os.pipe()  # write_end stays open: a grandchild still holds the server's stdout
    seen = Seen()
    thread, pump = late_pump(read_end, seen, delay=0.0)
    StdioTap.__new__(StdioTap)._drain([(thread, pump)])
    assert thread.is_alive() and not seen.ended and seen.received == b""
    os.close(write_end)
    thread.join(5)
    assert seen.ended
    os.close(read_end)
