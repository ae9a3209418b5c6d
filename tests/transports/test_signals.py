"""The tap's signals, caught on a pipe for the relay thread (``SignalPipe``), in this process."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.eventually import eventually

from wiretap.recording.events import Header
from wiretap.recording.reader import read_all
from wiretap.recording.recorder import Recorder
from wiretap.recording.writer import RecordingWriter, create_unique
from wiretap.transports.signals import SignalPipe
from wiretap.transports.stdio import StdioTap


@pytest.fixture
def caught() -> Iterator[tuple[SignalPipe, list[tuple[int, str]]]]:
    handed_on: list[tuple[int, str]] = []

    def hand_on(signum: int) -> None:
        handed_on.append((signum, threading.current_thread().name))

    pipe = SignalPipe([signal.SIGUSR1, signal.SIGUSR2], hand_on)
    pipe.install()
    try:
        yield pipe, handed_on
    finally:
        pipe.restore()


def test_while_the_relay_watches_a_signal_waits_on_the_pipe_for_it_and_is_handed_on_once(
    caught: tuple[SignalPipe, list[tuple[int, str]]],
) -> None:
    pipe, handed_on = caught
    pipe.watched = True
    os.kill(os.getpid(), signal.SIGUSR1)  # (runs the main thread's Python handler before it returns)
    assert handed_on == []
    readable, _, _ = select.select([pipe.fd], [], [], 0)
    assert readable == [pipe.fd], "the signal's byte should wait on the pipe for the relay"
    relay = threading.Thread(target=pipe.take, name="relay")
    relay.start()
    relay.join()
    pipe.take()
    assert handed_on == [(signal.SIGUSR1, "relay")]


def test_once_the_relay_stops_watching_the_main_threads_handler_hands_signals_on(
    caught: tuple[SignalPipe, list[tuple[int, str]]],
) -> None:
    pipe, handed_on = caught
    pipe.watched = True
    os.kill(os.getpid(), signal.SIGUSR1)
    pipe.unwatched()  # what the relay had not taken yet
    os.kill(os.getpid(), signal.SIGUSR2)
    eventually(lambda: len(handed_on) == 2, "both signals handed on")
    assert [n for n, _ in handed_on] == [signal.SIGUSR1, signal.SIGUSR2]


def test_signals_caught_in_a_burst_are_each_handed_on_once_whichever_threads_take_them(
    caught: tuple[SignalPipe, list[tuple[int, str]]],
) -> None:
    pipe, handed_on = caught
    pipe.watched = True
    for _ in range(100):  # each delivered to this thread before the next is sent: none merge
        os.kill(os.getpid(), signal.SIGUSR1)
    takers = [threading.Thread(target=pipe.take) for _ in range(3)]
    for taker in takers:
        taker.start()
    for taker in takers:
        taker.join()
    pipe.unwatched()
    assert len(handed_on) == 100


def test_restoring_puts_back_the_handlers_and_wakeup_descriptor_it_found() -> None:
    def before(_n: int, _f: object) -> None:
        pass

    previous = signal.signal(signal.SIGUSR1, before)
    try:
        pipe = SignalPipe([signal.SIGUSR1], lambda _n: None)
        pipe.install()
        assert signal.getsignal(signal.SIGUSR1) is not before
        pipe.restore()
        assert signal.getsignal(signal.SIGUSR1) is before
        assert signal.set_wakeup_fd(-1) == -1
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_away_from_the_main_thread_nothing_is_caught_and_nothing_fails() -> None:
    handlers = signal.getsignal(signal.SIGUSR1)
    pipe = SignalPipe([signal.SIGUSR1], lambda _n: None)
    installer = threading.Thread(target=pipe.install)
    installer.start()
    installer.join()
    assert signal.getsignal(signal.SIGUSR1) is handlers
    pipe.restore()


def test_a_pipe_a_relay_still_watches_stays_open_after_restoring_until_the_relay_lets_it_go() -> None:
    handed_on: list[int] = []
    pipe = SignalPipe([signal.SIGUSR1], handed_on.append)
    pipe.install()
    pipe.watch()
    watched_fd = pipe.fd
    pipe.restore()
    os.fstat(watched_fd)  # still ours: a pipe opened now cannot take its number
    after_read, after_write = os.pipe()
    try:
        assert watched_fd not in (after_read, after_write)
        os.write(after_write, bytes([signal.SIGUSR1]))
        pipe.take()  # what the relay does when its poll wakes: it reads only its own pipe
        assert handed_on == []
        assert os.read(after_read, 1) == bytes([signal.SIGUSR1])
    finally:
        os.close(after_read)
        os.close(after_write)
    pipe.unwatched()
    with pytest.raises(OSError):
        os.fstat(watched_fd)


def test_a_pipe_no_relay_watches_is_closed_when_restored() -> None:
    pipe = SignalPipe([signal.SIGUSR1], lambda _n: None)
    pipe.install()
    pipe.watched = True  # (the finish's wait: the byte stays on the pipe, no relay thread)
    fd = pipe.fd
    pipe.restore()
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_signal_passed_on_is_recorded_before_the_exit_it_causes_on_another_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.jsonl"
    fd, path = create_unique(path)
    recorder = Recorder(RecordingWriter(fd, path), Header(transport="stdio", name="t", argv=["srv"]))
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    tap = StdioTap(["srv"], recorder)
    tap._proc = server
    waiter = threading.Thread(target=lambda: tap._record_exit(server.wait()))  # (the tap's main thread)
    waiter.start()
    kill = os.kill

    def kill_and_let_the_exit_be_recorded(pid: int, signum: int) -> None:
        kill(pid, signum)
        waiter.join(1)  # the server's exit races the signal's record: give the exit every chance

    monkeypatch.setattr(os, "kill", kill_and_let_the_exit_be_recorded)
    try:
        tap._forward(signal.SIGTERM)
    finally:
        monkeypatch.undo()
        server.kill()
        waiter.join(10)
    recorder.close()
    _, events, _ = read_all(path)
    assert [e["kind"] for e in events if e["kind"] in ("signal", "exit")] == ["signal", "exit"]
    assert [e.get("signal") for e in events if e["kind"] in ("signal", "exit")] == ["SIGTERM", "SIGTERM"]


HAND_OVER = """
import os, select, signal, sys
from wiretap.run.finish import finish_signals
from wiretap.transports.signals import FORWARDED_SIGNALS, SignalPipe
finishing = finish_signals() if sys.argv[1] == "finish-first" else None
relay = SignalPipe(FORWARDED_SIGNALS, lambda signum: None)
relay.install()
relay.restore()
os.kill(os.getpid(), signal.SIGTERM)
finishing = finishing or finish_signals()
ready, _, _ = select.select([finishing.fd], [], [], 10)
finishing.restore()
print("the wait woke" if ready else "the wait slept")
"""


@pytest.mark.parametrize(
    ("order", "status", "printed"), [("finish-first", 0, "the wait woke\n"), ("relay-first", -15, "")]
)
def test_a_sigterm_between_the_relays_end_and_the_finish_ends_the_wait_only_when_the_finish_caught_it_first(
    order: str, status: int, printed: str
) -> None:
    """The tap catches the finish's signals before its relay's, so the relay hands them back on its way out;
    in the other order the signal in between takes its default action and kills wiretap."""
    done = subprocess.run([sys.executable, "-c", HAND_OVER, order], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (status, printed), done.stderr
