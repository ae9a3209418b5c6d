"""A recording is complete the moment wiretap exits after a normal end, and within a moment after a
client's hurried one: read here the instant ``wiretap tap`` or ``wiretap proxy`` returns, as a CI step's
``jq`` or ``cp`` would, without waiting."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from scenarios.http_upstream import Upstream
from support.taprun import SCENARIO_SERVER, TAP

from wiretap.recording.complete import State, await_end
from wiretap.recording.origin import at, utc_ms

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def lines_at_exit(recording: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in recording.read_bytes().splitlines()]


def test_fifty_quick_taps_each_leave_a_file_that_ends_with_end_the_moment_they_exit(tmp_path: Path) -> None:
    endings = []
    for n in range(50):
        recording = tmp_path / f"r{n}.jsonl"
        done = subprocess.run(
            [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "one-and-bye"],
            input=PING,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        events = lines_at_exit(recording)  # at once: no waiting of the test's own
        endings.append(events[-1]["kind"])
        assert [e.get("text") for e in events if e["kind"] == "stderr"] == ["bye"]
    assert endings == ["end"] * 50


def test_a_tap_signalled_by_its_client_exits_at_once_and_the_file_holds_the_signal_and_last_words_within_a_second(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "r.jsonl"
    tap = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "on-sigint"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert tap.stderr is not None
    assert tap.stderr.readline().startswith(b"pid ")
    tap.send_signal(signal.SIGINT)
    assert tap.wait(30) == 0
    completion = await_end(recording, 1.0, patient=True)
    assert completion.state is State.COMPLETE, completion.describe()
    events = lines_at_exit(recording)
    assert [e["signal"] for e in events if e["kind"] == "signal"] == ["SIGINT"]
    assert [e.get("text") for e in events if e["kind"] == "stderr"][-1] == "got SIGINT, bye"
    assert events[-1]["ended"] == "signal"
    tap.communicate(timeout=30)


def test_past_the_bound_wiretap_says_the_recorder_is_still_finishing_and_the_file_completes_after(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "r.jsonl"
    done = subprocess.run(
        [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "one-and-bye"],
        input=PING,
        capture_output=True,
        timeout=60,
        env={**os.environ, "WIRETAP_COMPLETE_WITHIN_S": "0"},
    )
    assert done.returncode == 0
    assert f"wiretap: the recorder is still finishing {recording}".encode() in done.stderr
    assert await_end(recording, 30, patient=True).complete


def _recorder_of(tap: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listing = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,args="], capture_output=True, text=True).stdout
        for line in listing.splitlines():
            pid, ppid, *args = line.split(None, 2)
            if int(ppid) == tap.pid and "wiretap.recording.sink" in " ".join(args):
                return int(pid)
        time.sleep(0.01)
    raise AssertionError(f"no recorder process under {tap.pid}")


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the tap's threads end")
def test_a_signal_while_the_tap_waits_for_its_recorder_ends_the_wait_with_the_servers_status(tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl"
    tap = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "one-and-bye"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "WIRETAP_COMPLETE_WITHIN_S": "120"},
    )
    assert tap.stdin and tap.stdout
    recorder = _recorder_of(tap)
    os.kill(recorder, signal.SIGSTOP)  # a recorder far behind: it cannot finish until it is let go
    try:
        tap.stdin.write(PING)
        tap.stdin.close()
        assert tap.stdout.readline().startswith(b'{"jsonrpc"')
        deadline = time.monotonic() + 30
        while _threads(tap.pid) > 1:  # the relay and stderr threads are done: the tap is closing up
            assert time.monotonic() < deadline and tap.poll() is None
            time.sleep(0.01)
        tap.send_signal(signal.SIGTERM)
        assert tap.wait(30) == 0  # the server's status, not SIGTERM's
    finally:
        os.kill(recorder, signal.SIGCONT)
    for pipe in (tap.stdout, tap.stderr):
        if pipe is not None:
            pipe.close()
    assert await_end(recording, 30, patient=True).complete
    events = lines_at_exit(recording)
    assert not [e for e in events if e["kind"] == "signal"]  # it came after the recording's end
    assert events[-1]["ended"] == "normal"


def test_a_proxy_stopped_by_sigint_exits_with_its_recording_complete(tmp_path: Path) -> None:
    recording = tmp_path / "p.jsonl"
    with Upstream() as upstream:
        proxy = subprocess.Popen(
            [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream.url, "--out", str(recording)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proxy.stdout is not None
        assert proxy.stdout.readline().startswith("http://127.0.0.1:")
        proxy.send_signal(signal.SIGINT)
        proxy.communicate(timeout=30)
    events = lines_at_exit(recording)
    assert events[-1]["kind"] == "end" and events[-1]["ended"] == "signal"


def test_started_is_the_wall_clock_at_t_zero_and_show_absolute_counts_from_it(tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl"
    subprocess.run(
        [*TAP, "--out", str(recording), "--", *SCENARIO_SERVER, "one-and-bye"], input=PING, capture_output=True
    )
    header, *events = lines_at_exit(recording)
    started = datetime.fromisoformat(str(header["started"]).replace("Z", "+00:00"))
    wall_ns = header["wall_origin_ns"]
    assert isinstance(wall_ns, int)
    assert 0 <= wall_ns - round(started.timestamp() * 1000) * 1_000_000 < 1_000_000  # cut to the millisecond
    shown = subprocess.run(
        [sys.executable, "-m", "wiretap", "show", str(recording), "--absolute", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [row["at"] for row in rows] == [utc_ms(at(wall_ns, float(e["t"]))) for e in events]  # type: ignore[arg-type]
