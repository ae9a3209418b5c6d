"""The stdio tap as a client runs it: real processes on real pipes, with servers of known behaviour."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.eventually import eventually
from support.taprun import (
    SCENARIO_SERVER,
    TAP,
    blocked_signals,
    read_pid_line,
    run_tap,
    settled_read_all,
    start_tap,
    wait_until_gone,
)

from wiretap.recording.reader import read_all
from wiretap.recording.streams import MESSAGE_LIMIT

CAT = ["cat"]


def test_json_rpc_round_trips_pass_unchanged_and_are_recorded_in_order(tmp_path: Path) -> None:
    requests = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": f"t{i}"}} for i in range(5)]
    wire = b"".join(json.dumps(r).encode() + b"\n" for r in requests)
    run = run_tap(tmp_path / "rec.jsonl", [*SCENARIO_SERVER, "answer"], [wire])
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 2, 3, 4]
    assert [e["msg"] for e in run.messages("c2s")] == requests
    assert [e["msg"] for e in run.messages("s2c")] == answers
    times = [e["t"] for e in run.events]
    assert times == sorted(times)
    assert run.returncode == 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.lists(
        st.one_of(
            st.binary(max_size=300).filter(lambda b: b"\n" not in b),
            st.dictionaries(st.text(max_size=8), st.text(max_size=30), max_size=4).map(
                lambda d: json.dumps({"jsonrpc": "2.0", "method": "x", "params": d}, ensure_ascii=False).encode()
            ),
        ),
        max_size=12,
    ),
    final_newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=1, max_value=97), max_size=30),
)
def test_any_bytes_in_any_chunking_pass_through_byte_for_byte(
    tmp_path: Path, content: list[bytes], final_newline: bool, cuts: list[int]
) -> None:
    data = b"\n".join(content) + (b"\n" if final_newline and content else b"")
    chunks, rest = [], data
    for size in cuts:
        chunks.append(rest[:size])
        rest = rest[size:]
    chunks.append(rest)
    recording = tmp_path / f"rec-{time.monotonic_ns()}.jsonl"
    run = run_tap(recording, CAT, [c for c in chunks if c])
    assert run.stdout == data
    recorded = run.messages("c2s")
    assert len(recorded) == len(list(data.split(b"\n"))) - (1 if data.endswith(b"\n") or not data else 0)
    assert sum(e["size"] for e in recorded) + data.count(b"\n") == len(data)


def test_a_line_of_the_message_limit_64_mib_passes_whole_and_is_recorded_as_one_message(tmp_path: Path) -> None:
    head, tail = b'{"jsonrpc":"2.0","method":"notifications/big","params":{"data":"', b'"}}\n'
    payload = "x" * (MESSAGE_LIMIT - len(head) - len(tail) + 1)  # (one longer and it is recorded truncated)
    line = head + payload.encode() + tail
    run = run_tap(tmp_path / "rec.jsonl", CAT, [line[i : i + (1 << 20)] for i in range(0, len(line), 1 << 20)])
    assert run.stdout == line
    (message,) = run.messages("c2s")
    assert message["size"] == len(line) - 1
    assert message["msg"]["params"]["data"] == payload


def test_lines_around_the_relays_read_size_pass_and_are_recorded_each_as_itself(tmp_path: Path) -> None:
    from wiretap.transports.pumps import CHUNK

    sizes = [CHUNK - 1, CHUNK, CHUNK + 1, 1, 3 * CHUNK + 5, 100_000, 7, 2 * CHUNK]
    lines = [
        b'{"jsonrpc":"2.0","method":"n","params":{"i":%d,"data":"%s"}}' % (i, bytes([97 + i]) * size)
        for i, size in enumerate(sizes)
    ]
    data = b"".join(line + b"\n" for line in lines)
    cuts = [CHUNK // 3, CHUNK + 17, 5, 2 * CHUNK, 99_999]
    chunks, at = [], 0
    for n in cuts * 3:
        chunks.append(data[at : at + n])
        at += n
    chunks.append(data[at:])
    run = run_tap(tmp_path / "rec.jsonl", CAT, [c for c in chunks if c])
    assert run.stdout == data
    recorded = run.messages("c2s")
    assert [e["size"] for e in recorded] == [len(line) for line in lines]
    assert [e["msg"] for e in recorded] == [json.loads(line) for line in lines]


def test_non_json_invalid_utf8_and_a_missing_final_newline_are_recorded_as_raw(tmp_path: Path) -> None:
    data = b'{"jsonrpc":"2.0","method":"ok"}\nStarting up...\n\xff\xfe bad bytes\n'
    data += b'{"jsonrpc":"2.0","method":"last"}'
    run = run_tap(tmp_path / "rec.jsonl", CAT, [data])
    assert run.stdout == data
    first, banner, binary, last = run.messages("c2s")
    assert first["msg"] == {"jsonrpc": "2.0", "method": "ok"}
    assert banner["raw"] == "Starting up..."
    assert "raw_base64" in binary and binary["size"] == len(b"\xff\xfe bad bytes")
    assert last["msg"]["method"] == "last" and last["eol"] == ""


def test_server_stderr_passes_through_and_each_line_is_an_event(tmp_path: Path) -> None:
    run = run_tap(tmp_path / "rec.jsonl", [sys.executable, "-c", "import sys; sys.stderr.write('one\\ntwo\\n')"], [])
    assert b"one\ntwo\n" in run.stderr
    assert [e["text"] for e in run.of_kind("stderr")] == ["one", "two"]


def test_the_lifecycle_is_on_the_same_timeline(tmp_path: Path) -> None:
    run = run_tap(tmp_path / "rec.jsonl", [*SCENARIO_SERVER, "answer"], [b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'])
    kinds = [e["kind"] for e in run.events]
    assert kinds[0] == "spawn" and kinds[-1] == "end"
    assert kinds.index("eof") < kinds.index("exit")
    spawn = run.events[0]
    assert spawn["argv"] == [*SCENARIO_SERVER, "answer"] and spawn["pid"] > 0
    assert run.of_kind("exit") == [{"t": run.of_kind("exit")[0]["t"], "kind": "exit", "status": 0, "code": 0}]


def test_the_header_says_what_was_recorded(tmp_path: Path) -> None:
    run = run_tap(tmp_path / "rec.jsonl", CAT, [], "--name", "my-server")
    header = run.header
    assert header["format"] == 1 and header["transport"] == "stdio" and header["name"] == "my-server"
    assert header["argv"] == ["cat"] and header["redacted"] is True
    assert header["started"].endswith("Z") and len(header["started"]) == len("2026-11-30T12:00:00.000Z")


def test_a_crashing_server_passes_its_exit_code_on_and_its_half_line_is_kept(tmp_path: Path) -> None:
    run = run_tap(tmp_path / "rec.jsonl", [*SCENARIO_SERVER, "crash"], [b'{"jsonrpc":"2.0","id":1,"method":"a"}\n'])
    assert run.returncode == 3
    assert run.stdout.endswith(b'{"jsonrpc":"2.0","method":"notifications/mess')
    assert run.of_kind("exit")[0]["code"] == 3
    assert run.messages("s2c")[-1]["raw"] == '{"jsonrpc":"2.0","method":"notifications/mess'


def test_a_server_killed_by_a_signal_is_reported_like_a_shell_does(tmp_path: Path) -> None:
    run = run_tap(tmp_path / "rec.jsonl", [*SCENARIO_SERVER, "segfault"], [b'{"jsonrpc":"2.0","id":1,"method":"a"}\n'])
    assert run.returncode == -signal.SIGSEGV
    exit_event = run.of_kind("exit")[0]
    assert exit_event["signal"] == "SIGSEGV" and exit_event["status"] == 128 + signal.SIGSEGV


def test_sigint_is_forwarded_and_recorded_and_the_tap_exits_with_the_server(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    with start_tap(recording, [*SCENARIO_SERVER, "on-sigint"]) as proc:
        read_pid_line(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    _, events, _ = settled_read_all(recording)
    (sig,) = [e for e in events if e["kind"] == "signal"]
    assert sig["signal"] == "SIGINT" and sig["forwarded"] is True
    assert [e["text"] for e in events if e["kind"] == "stderr"][-1] == "got SIGINT, bye"
    assert next(e for e in events if e["kind"] == "exit")["code"] == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="aims a signal at one thread with tgkill (Linux)")
@pytest.mark.parametrize("portable", [False, True], ids=["poll", "select (macOS)"])
def test_a_signal_the_kernel_delivers_to_the_relay_thread_still_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, portable: bool
) -> None:
    """macOS may deliver a process's signal to any of its threads that does not block it (Linux does when
    the main thread has one pending); a signal that interrupts only the main thread's wait would then not
    be passed on. The relay thread takes it; the stderr thread blocks it."""
    if portable:
        monkeypatch.setenv("WIRETAP_PORTABLE", "1")
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    recording = tmp_path / "rec.jsonl"
    with start_tap(recording, [*SCENARIO_SERVER, "on-sigint"]) as proc:
        read_pid_line(proc)
        threads = sorted(int(tid) for tid in os.listdir(f"/proc/{proc.pid}/task") if int(tid) != proc.pid)
        deaf = [tid for tid in threads if signal.SIGINT in blocked_signals(proc.pid, tid)]
        (relay,) = set(threads) - set(deaf)
        assert len(threads) == 2 and len(deaf) == 1, "the relay, and the server's stderr deaf to signals"
        assert tgkill(proc.pid, relay, signal.SIGINT) == 0
        try:
            status = proc.wait(10)
        finally:
            if proc.poll() is None:  # the server never got it: this one reaches the main thread, to fail, not hang
                proc.send_signal(signal.SIGINT)
        assert status == 0
    _, events, _ = settled_read_all(recording)
    (sig,) = [e for e in events if e["kind"] == "signal"]
    assert sig["signal"] == "SIGINT" and sig["forwarded"] is True
    assert [e["text"] for e in events if e["kind"] == "stderr"][-1] == "got SIGINT, bye"


def test_claude_codes_shutdown_sequence_reaches_a_stubborn_server_and_its_death_is_passed_on(
    tmp_path: Path,
) -> None:
    """SIGINT, then SIGTERM 100 ms later, stdin left open: what Claude Code does (PEERS.md)."""
    recording = tmp_path / "rec.jsonl"
    with start_tap(recording, [*SCENARIO_SERVER, "stubborn"]) as proc:
        server_pid = read_pid_line(proc)
        proc.send_signal(signal.SIGINT)
        # Claude Code's SIGTERM comes 100 ms later; here it comes once the server has shown it ignored SIGINT.
        eventually(lambda: b"ignoring SIGINT" in recording.read_bytes(), "the server to ignore SIGINT")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == -signal.SIGTERM
    wait_until_gone(server_pid, "the server to go")
    _, events, _ = settled_read_all(recording)
    assert [e["signal"] for e in events if e["kind"] == "signal"] == ["SIGINT", "SIGTERM"]
    assert "ignoring SIGINT" in [e["text"] for e in events if e["kind"] == "stderr"]
    assert next(e for e in events if e["kind"] == "exit")["signal"] == "SIGTERM"
    assert events[-1]["kind"] == "end"


def test_when_the_tap_is_killed_the_server_goes_too_and_the_recording_is_readable(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    with start_tap(recording, [*SCENARIO_SERVER, "sleeper"]) as proc:
        assert proc.stdin is not None
        server_pid = read_pid_line(proc)
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        eventually(lambda: b"notifications/initialized" in recording.read_bytes(), "the notification recorded")
        proc.kill()
        proc.wait(10)
    wait_until_gone(server_pid, "the server to go")
    header, events, skipped = settled_read_all(recording)
    assert header["kind"] == "header" and not skipped
    assert [e["msg"]["method"] for e in events if e["kind"] == "message"] == ["notifications/initialized"]
    assert [e["kind"] for e in events][-1] == "end" and events[-1]["ended"] == "relay_died"


def test_a_server_that_cannot_start_exits_127_with_one_line_and_is_recorded(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    result = subprocess.run(
        [*TAP, "--out", str(recording), "--", "/nonexistent/server"], capture_output=True, timeout=30
    )
    assert result.returncode == 127
    assert result.stderr.decode().strip() == "wiretap: cannot start '/nonexistent/server': No such file or directory"
    _, events, _ = settled_read_all(recording)
    assert events[0]["kind"] == "spawn_failed"


def test_if_the_recording_cannot_be_written_traffic_still_flows_and_the_failure_is_loud(
    tmp_path: Path,
) -> None:
    wire = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    proc = subprocess.run(
        [*TAP, "--out", "/proc/wiretap-cannot-write/rec.jsonl", "--", *SCENARIO_SERVER, "answer"],
        input=wire,
        capture_output=True,
        timeout=30,
    )
    assert json.loads(proc.stdout)["id"] == 1
    assert b"RECORDING FAILED" in proc.stderr
    assert proc.returncode == 0


def test_a_recording_that_fills_its_disk_marks_the_gap_and_traffic_flows(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the disk 'full' after the header; the tap must carry on regardless."""
    import resource

    recording = tmp_path / "rec.jsonl"
    wire = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(50))

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, resource.RLIM_INFINITY))

    proc = subprocess.run(
        [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "answer"],
        input=wire,
        capture_output=True,
        timeout=30,
        preexec_fn=small_disk,
    )
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == list(range(50))
    assert b"RECORDING FAILED" in proc.stderr
    assert recording.stat().st_size <= 2000
    header, _, _ = read_all(recording)  # no end event: the disk had no room left for one
    assert header["kind"] == "header"


def test_recordings_are_readable_by_their_owner_only_and_named_by_time_and_name(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*TAP, "--name", "my server", "--", "cat"], input=b"", cwd=tmp_path, timeout=30, capture_output=True
    )
    assert proc.returncode == 0
    (path,) = (tmp_path / "wiretap-recordings").iterdir()
    assert path.name.endswith("-my-server.jsonl") and path.name[:8].isdigit()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_recording_is_never_overwritten(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    recording.write_text("precious\n")
    proc = subprocess.run([*TAP, "--out", str(recording), "--", "cat"], input=b"", capture_output=True, timeout=30)
    assert recording.read_text() == "precious\n"
    assert (tmp_path / "rec.1.jsonl").exists()
    assert b"rec.1.jsonl" in proc.stderr


def test_credentials_in_argv_and_messages_are_redacted_unless_asked_not_to(tmp_path: Path) -> None:
    wire = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"api_key":"s3cret-value"}}}\n'
    server = [*SCENARIO_SERVER, "answer", "--token", "tok-123"]
    redacted = run_tap(tmp_path / "a.jsonl", server, [wire])
    assert "s3cret-value" not in (tmp_path / "a.jsonl").read_text()
    assert "tok-123" not in (tmp_path / "a.jsonl").read_text()
    assert redacted.stdout.count(b"s3cret-value") == 1
    plain = run_tap(tmp_path / "b.jsonl", server, [wire], "--no-redact")
    assert plain.messages("c2s")[0]["msg"]["params"]["arguments"]["api_key"] == "s3cret-value"


@pytest.mark.parametrize("option", ["--bogus", "--out"])
def test_bad_options_get_a_usage_error_not_a_traceback(option: str) -> None:
    result = subprocess.run([*TAP, option], capture_output=True, timeout=30)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
