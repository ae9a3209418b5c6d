"""The tap relays both directions on one thread: neither direction ever waits for the other."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support.taprun import TAP, settled_read_all

SIZE = 4 << 20  # many times what a pipe holds
HEAD, TAIL = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"', b'"}}\n'
ANSWER = HEAD + b"a" * SIZE + TAIL

# Writes a big answer at once, while it reads a big request on another thread: a server that a
# client may write to before it reads, without either of them waiting forever.
EAGER_SERVER = textwrap.dedent(f"""
    import os, sys, threading
    def answer():
        os.write(1, {HEAD!r} + b"a" * {SIZE} + {TAIL!r})
    writer = threading.Thread(target=answer)
    writer.start()
    got = 0
    while chunk := os.read(0, 1 << 16):
        got += len(chunk)
    writer.join()
    os.write(2, str(got).encode())
""")


@pytest.mark.parametrize("portable", ["0", "1"], ids=["poll", "select (macOS)"])
def test_a_client_that_writes_a_big_request_before_reading_gets_the_servers_big_answer_meanwhile(
    tmp_path: Path, portable: str
) -> None:
    recording = tmp_path / "eager.jsonl"
    request = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"q":"' + b"q" * SIZE + b'"}}\n'
    proc = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", sys.executable, "-c", EAGER_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "WIRETAP_PORTABLE": portable},
    )
    assert proc.stdin and proc.stdout and proc.stderr
    answer: list[bytes] = []
    with proc:
        proc.stdin.write(request)  # all of it, before reading a byte: the tap must not stop reading it
        proc.stdin.close()
        reader = threading.Thread(target=lambda: answer.append(proc.stdout.read()))  # type: ignore[union-attr]
        reader.start()
        reader.join(60)
        assert proc.wait(60) == 0
        assert proc.stderr.read() == str(len(request)).encode()
    assert answer == [ANSWER]
    _, events, _ = settled_read_all(recording)
    assert [e["dir"] for e in events if e["kind"] == "message"] in (["c2s", "s2c"], ["s2c", "c2s"])
    assert not [e for e in events if e["kind"] == "error"]


def test_a_stdout_it_shares_with_its_parent_is_left_blocking_as_it_was(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()  # the test keeps the write end: the tap's stdout is the same description
    proc = subprocess.Popen(
        [*TAP, "--out", str(tmp_path / "shared.jsonl"), "--", sys.executable, "-c", "print('{}')"],
        stdin=subprocess.DEVNULL,
        stdout=write_end,
    )
    assert proc.wait(60) == 0
    assert os.get_blocking(write_end)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        assert out.read() == b"{}\n"


NOTIFICATIONS = 'for i in range(5000): print(\'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}\' % i)'


def test_a_stdout_that_is_a_file_gets_every_byte(tmp_path: Path) -> None:
    lines = b"".join(b'{"jsonrpc":"2.0","method":"n","params":{"i":%d}}\n' % i for i in range(5000))
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stdout:
        proc = subprocess.run(
            [*TAP, "--out", str(tmp_path / "file.jsonl"), "--", sys.executable, "-c", NOTIFICATIONS],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            timeout=60,
        )
    assert proc.returncode == 0
    assert out.read_bytes() == lines
    _, events, _ = settled_read_all(tmp_path / "file.jsonl")
    assert sum(e["kind"] == "message" for e in events) == 5000


# Writes more than the client's pipe holds (but not more than wiretap can take) and exits, leaving a
# grandchild that holds its stdout open: the tap sees no end of file, only that nothing more comes.
LATE = 100_000
LEAVES_A_GRANDCHILD = (
    f"import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3)']); "
    f"os.write(1, {HEAD!r} + b'a' * {LATE} + {TAIL!r})"
)


def test_a_servers_last_big_answer_reaches_a_client_that_reads_late_in_full(tmp_path: Path) -> None:
    """What the client has not taken yet when the server exits is still passed on, all of it, before the
    tap goes, however long the client takes to start reading."""
    recording = tmp_path / "late.jsonl"
    proc = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", sys.executable, "-c", LEAVES_A_GRANDCHILD],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    with proc:
        time.sleep(0.5)  # the server has exited by now; the rest of its answer waits in the tap
        answer = proc.stdout.read()
        assert proc.wait(60) == 0
    assert answer == HEAD + b"a" * LATE + TAIL
    _, events, _ = settled_read_all(recording)
    assert [e["dir"] for e in events if e["kind"] == "message"] == ["s2c"]
