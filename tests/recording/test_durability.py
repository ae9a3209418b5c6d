"""The record never loses what passed: floods, kill -9, SIGTERM, a dying recorder, bad frames.

Every test counts messages and bytes; none times anything. "Received" is what the client had read
when the relay died; every one of those must be in the recording once the recorder has settled.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.eventually import eventually
from support.floods import peak_rss, recorded_numbers, start_flood
from support.taprun import TAP, pid_alive, read_pid_line, settled_read_all, wait_until_gone

from wiretap.recording.complete import await_end
from wiretap.recording.reader import read_all
from wiretap.recording.recorder import grow_pipe

MiB = 1 << 20


def read_lines(fd: int, at_least: int | None = None) -> bytes:
    """Read until ``at_least`` complete lines came, or (None) until end of file."""
    got = bytearray()
    while at_least is None or got.count(b"\n") < at_least:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        got += chunk
    return bytes(got)


def numbers(wire: bytes) -> list[int]:
    return [json.loads(line)["params"]["n"] for line in wire.split(b"\n")[:-1]]


def interrupt_mid_flood(tmp_path: Path, how: signal.Signals, *extra: str, env: dict[str, str] | None = None) -> Any:
    recording = tmp_path / "rec.jsonl"
    proc = start_flood(recording, 1000, 200, *extra, env=env)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    server_pid = read_pid_line(proc)
    received = read_lines(proc.stdout.fileno(), at_least=30_000)
    proc.send_signal(how)
    received += read_lines(proc.stdout.fileno())  # what the tap wrote before it went
    returncode = proc.wait(30)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    _header, events, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    return returncode, server_pid, numbers(received), events


def test_a_tap_killed_mid_flood_leaves_every_message_its_client_received_in_the_recording(tmp_path: Path) -> None:
    returncode, server_pid, received, events = interrupt_mid_flood(tmp_path, signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    assert received == list(range(len(received))) and len(received) >= 30_000
    assert recorded_numbers(events)[: len(received)] == received
    end = events[-1]
    assert end["kind"] == "end" and end["ended"] == "relay_died" and end["lost"] == 0
    wait_until_gone(server_pid, "the server to go with its tap")


def test_sigterm_under_flood_ends_the_server_the_tap_and_the_recording_in_order(tmp_path: Path) -> None:
    returncode, _server_pid, received, events = interrupt_mid_flood(tmp_path, signal.SIGTERM)
    assert returncode == -signal.SIGTERM  # the server died of it, and the tap passed that on
    assert received == list(range(len(received)))
    recorded = recorded_numbers(events)
    assert recorded[: len(received)] == received
    assert [e["signal"] for e in events if e["kind"] == "signal"] == ["SIGTERM"]
    assert [e["status"] for e in events if e["kind"] == "exit"] == [128 + signal.SIGTERM]
    end = events[-1]
    assert end["kind"] == "end" and end["ended"] == "signal" and end["signals"] == ["SIGTERM"] and end["lost"] == 0


def test_without_linux_only_primitives_a_killed_tap_still_leaves_a_whole_recording(tmp_path: Path) -> None:
    """WIRETAP_PORTABLE=1 takes the path macOS takes: the default pipe size, no /proc."""
    env = {**os.environ, "WIRETAP_PORTABLE": "1"}
    _returncode, server_pid, received, events = interrupt_mid_flood(tmp_path, signal.SIGKILL, env=env)
    assert recorded_numbers(events)[: len(received)] == received and len(received) >= 30_000
    assert events[-1]["ended"] == "relay_died" and events[-1]["lost"] == 0
    wait_until_gone(server_pid, "the server to go")
    read_end, write_end = os.pipe()
    try:
        os.environ["WIRETAP_PORTABLE"] = "1"
        assert grow_pipe(write_end) == 0
    finally:
        del os.environ["WIRETAP_PORTABLE"]
        os.close(read_end)
        os.close(write_end)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the tap's peak memory from /proc")
def test_a_flood_larger_than_the_recorders_buffer_is_recorded_whole_in_bounded_memory(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    count, size = 40_000, 4096  # 160 MiB: more than the recorder's inbox and the pipe together
    proc = start_flood(recording, count, size, forever=False)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    seen, partial, tap_peak, reads = 0, b"", 0, 0
    while chunk := os.read(proc.stdout.fileno(), 1 << 16):  # checked as it comes, not held
        *lines, partial = (partial + chunk).split(b"\n")
        for line in lines:
            assert json.loads(line)["params"]["n"] == seen
            seen += 1
        reads += 1
        if reads % 64 == 0:
            with contextlib.suppress(OSError, StopIteration):
                tap_peak = max(tap_peak, peak_rss(proc.pid))
    assert proc.wait(60) == 0 and seen == count
    proc.stdout.close()
    proc.stderr.close()
    _, events, _ = settled_read_all(recording)
    assert recorded_numbers(events) == list(range(count))
    end = events[-1]
    assert end["lost"] == 0 and end["ended"] == "normal"
    assert 0 < tap_peak < 128 * MiB, "the tap grew past 128 MiB"
    assert end["recorder_max_rss"] < 128 * MiB, "the recorder grew past 128 MiB"


def test_on_overload_drop_keeps_the_pace_and_counts_exactly_what_it_did_not_record(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    count = 150_000
    proc = start_flood(recording, count, 200, "--on-overload", "drop", forever=False)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    received = read_lines(proc.stdout.fileno())
    assert proc.wait(60) == 0
    proc.stdout.close()
    proc.stderr.close()
    assert numbers(received) == list(range(count))
    _, events, _ = settled_read_all(recording)
    recorded = recorded_numbers(events)
    assert recorded == sorted(set(recorded))  # in order, none twice
    end = events[-1]
    dropped = end.get("dropped", {}).get("messages", 0)
    assert len(recorded) + dropped == count
    gaps = [e for e in events if e.get("error") == "recording_gap"]
    assert sum(g["bytes"] for g in gaps) == end.get("dropped", {}).get("bytes", 0)
    if dropped:  # this machine may be fast enough to record it all; if not, the gaps say so
        assert gaps and end["lost"] >= dropped


def sink_pid_of(tap_pid: int) -> int:
    with open(f"/proc/{tap_pid}/task/{tap_pid}/children") as f:
        children = [int(pid) for pid in f.read().split()]
    for pid in children:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"wiretap.recording.sink" in f.read():
                return pid
    raise AssertionError("no recorder process")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process's threads in /proc")
def test_a_killed_process_is_gone_only_once_its_last_thread_is() -> None:
    # The leader of a killed process shows "Z" while a busy machine has yet to end its other threads,
    # which still hold the process's descriptors (the recorder's pipe, for the test below).
    code = "import ctypes, threading, time\nthreading.Thread(target=time.sleep, args=(30,)).start()\n"
    code += "ctypes.CDLL(None).pthread_exit(None)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        stat = Path(f"/proc/{proc.pid}/stat")
        eventually(lambda: stat.read_text().split(")")[-1].split()[0] == "Z", "the leader to end", 10)
        assert pid_alive(proc.pid)
        proc.kill()
        wait_until_gone(proc.pid)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the recorder process through /proc")
def test_when_the_recorder_dies_traffic_flows_on_and_the_recording_says_so(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    server = [sys.executable, str(paths.SCENARIOS / "stdio_server.py"), "answer"]
    proc = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", *server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def call(n: int) -> int:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n)
        proc.stdin.flush()
        return int(json.loads(proc.stdout.readline())["id"])

    assert [call(n) for n in range(100)] == list(range(100))
    while b'"id":99,' not in recording.read_bytes():  # recorded, before the recorder goes
        time.sleep(0.01)
    sink = sink_pid_of(proc.pid)
    os.kill(sink, signal.SIGKILL)
    wait_until_gone(sink, "the sink to go")
    assert [call(n) for n in range(100, 300)] == list(range(100, 300))  # never blocked, never lost
    proc.stdin.close()
    assert proc.wait(30) == 0
    stderr = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert b"RECORDING FAILED" in stderr
    _, events, _ = read_all(recording)
    requests = [e["msg"]["id"] for e in events if e["kind"] == "message" and e["dir"] == "c2s" and "msg" in e]
    assert requests[:100] == list(range(100))
    died = [e for e in events if e.get("error") == "recorder_died"]
    assert len(died) == 1
    end = events[-1]
    assert end["kind"] == "end" and end["lost_unknown"] is True and end["lost"] > 0


def test_a_frame_the_recorder_cannot_read_costs_that_frame_only(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    # A lone surrogate next to a key that asks for redaction: the redactor's JSON round trip chokes on it.
    bad = b'{"jsonrpc":"2.0","id":500,"method":"x","params":{"token":"abc","s":"\\ud800"}}\n'
    lines = [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n for n in range(1000)]
    lines[500] = bad
    proc = subprocess.run(
        [*TAP, "--out", str(recording), "--", "cat"],
        input=b"".join(lines),
        capture_output=True,
        timeout=60,
    )
    assert proc.stdout == b"".join(lines)
    _, events, _ = settled_read_all(recording)
    for direction in ("c2s", "s2c"):
        messages = [e for e in events if e["kind"] == "message" and e["dir"] == direction]
        assert len(messages) == 1000
        ids = [e["msg"]["id"] for e in messages if "msg" in e]
        assert [n for n in ids if n != 500] == [n for n in range(1000) if n != 500]
        kept = messages[500]
        # Either the redactor can read it now, or it is kept raw (without the token) next to an error.
        assert "msg" in kept or ("raw" in kept and "abc" not in kept["raw"])
    assert events[-1]["lost"] == 0


def _events(out: list[Any]) -> list[tuple[dict[str, Any], Any]]:
    """A stream's output as (fields, msg) pairs: lines it encoded itself are read back."""
    from wiretap.recording.streams import Lines

    pairs: list[tuple[dict[str, Any], Any]] = []
    for item in out:
        if isinstance(item, Lines):
            lines = b"".join(item.pieces).splitlines()
            assert len(lines) == item.count
            pairs += [(fields, fields.pop("msg", None)) for fields in map(json.loads, lines)]
        else:
            fields, msg = item
            pairs.append((fields, None if msg is None else json.loads(msg)))
    return pairs


def _break_on_boom(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from wiretap.recording import streams

    real = getattr(streams, name)

    def broken(frame: Any, **kwargs: Any) -> Any:
        if b"boom" in (b"".join(frame) if isinstance(frame, list) else frame):
            raise ValueError("boom")
        return real(frame, **kwargs)

    monkeypatch.setattr(streams, name, broken)


def test_a_frame_that_breaks_the_parser_is_kept_raw_with_an_error_event(monkeypatch: pytest.MonkeyPatch) -> None:
    from wiretap.recording import streams

    _break_on_boom(monkeypatch, "are_verbatim_json")  # the fast reading of a chunk's clean JSON lines...
    _break_on_boom(monkeypatch, "is_verbatim_json")  # ...and of one line...
    _break_on_boom(monkeypatch, "record_frame")  # ...and the full one
    stream = streams.LineStream("s2c", redact=False)
    out = _events(list(stream.feed(1.0, b'{"a":1}\n{"boom":2}\n{"c":3}\n')))
    kinds = [(fields["kind"], fields.get("raw"), msg) for fields, msg in out]
    assert kinds == [
        ("message", None, {"a": 1}),
        ("message", '{"boom":2}', None),
        ("error", None, None),
        ("message", None, {"c": 3}),
    ]
    assert out[2][0]["error"] == "bad_frame" and "boom" in out[2][0]["message"]


def test_a_frame_that_breaks_only_the_fast_reading_is_recorded_by_the_full_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from wiretap.recording import streams

    _break_on_boom(monkeypatch, "are_verbatim_json")
    _break_on_boom(monkeypatch, "is_verbatim_json")
    stream = streams.LineStream("s2c", redact=True)
    out = _events(list(stream.feed(1.0, b'{"a":1}\n{"boom":2}\n{"c":3}\n')))
    assert [(fields["kind"], fields["size"], msg) for fields, msg in out] == [
        ("message", 7, {"a": 1}),
        ("message", 10, {"boom": 2}),
        ("message", 7, {"c": 3}),
    ]


def test_a_killed_tap_takes_the_servers_whole_process_group_with_it(tmp_path: Path) -> None:
    """The server is `sh -c 'SERVER; true'`: the shell's child must go too, not only the shell."""
    server = f"{sys.executable} {paths.SCENARIOS / 'stdio_server.py'} sleeper; true"
    proc = subprocess.Popen(
        [*TAP, "--out", str(tmp_path / "rec.jsonl"), "--", "sh", "-c", server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    grandchild = read_pid_line(proc)
    proc.kill()
    proc.wait(10)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    wait_until_gone(grandchild, "the server's child to go with the tap")
    _, events, _ = settled_read_all(tmp_path / "rec.jsonl")
    assert events[-1]["ended"] == "relay_died"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the recorder process through /proc")
def test_a_recorder_that_stops_taking_records_never_holds_traffic_and_the_gap_is_counted(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    env = {**os.environ, "WIRETAP_RECORDER_STALL_S": "0.5"}
    proc = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", "cat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":-1,"method":"ping"}\n')
    proc.stdin.flush()
    assert proc.stdout.readline().startswith(b'{"jsonrpc"')
    while b'"id":-1' not in recording.read_bytes():
        time.sleep(0.01)
    sink = sink_pid_of(proc.pid)
    os.kill(sink, signal.SIGSTOP)  # alive, but takes nothing: the pipe fills and stays full
    count = 30_000  # ~3.6 MiB each way: well past the pipe
    lines = [b'{"jsonrpc":"2.0","id":%d,"method":"x","params":{"pad":"%s"}}\n' % (n, b"y" * 60) for n in range(count)]
    writer = threading.Thread(target=lambda: (proc.stdin.writelines(lines), proc.stdin.close()))  # type: ignore[union-attr]
    writer.start()
    received = read_lines(proc.stdout.fileno())  # every line comes back, though nothing is recorded
    writer.join()
    assert received.count(b"\n") == count
    with contextlib.suppress(ProcessLookupError):  # (gone if wiretap had to end it)
        os.kill(sink, signal.SIGCONT)
    assert proc.wait(60) == 0
    await_end(recording, 30, patient=True)
    stderr = proc.stderr.read()
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    _, events, _ = read_all(recording)  # complete once the tap is gone: a stalled recorder is not waited for
    end = events[-1]
    assert end["kind"] == "end" and end["lost"] > 0
    if b"RECORDING FAILED" in stderr:  # it stalled halfway through a record: wiretap ended it
        assert [e["error"] for e in events if e.get("error") == "recorder_died"] == ["recorder_died"]
        assert end["lost_unknown"] is True
        return
    assert b"has taken nothing" in stderr  # it stalled between records: exact counts
    for direction in ("c2s", "s2c"):
        ids = [e["msg"]["id"] for e in events if e["kind"] == "message" and e["dir"] == direction and "msg" in e]
        assert ids == sorted(set(ids)) and len(ids) < count + 1
    recorded = sum(1 for e in events if e["kind"] == "message" and "msg" in e)
    assert recorded + end["dropped"]["messages"] == 2 * (count + 1)
