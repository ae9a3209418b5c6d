"""``wiretap replay``: a recording of the scenario server (tests/scenarios/replay_task_server.py, through the
real tap) played back as the server to a client on real pipes, and as the client to the real server.

The recorded session (replayrun.play_session): server/discover, tools/list (the server logs a line
unprompted 0.20 s later), tools/call echo, tools/call slow (progress after 0.10 s, answer after 0.30 s),
tools/call ask (the server asks the client with elicitation/create and answers 0.10 s after it does).
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.replayrun import TASK_SERVER, WIRETAP, LineClient, play_session, recorded_session

from wiretap.replay.matchers import Request, closest, failures, parse_match_on
from wiretap.replay.pace import Pace
from wiretap.replay.plan import MISS_CODE
from wiretap.replay.volatile import TIMESTAMP_PLACEHOLDER, Volatile
from wiretap.wire.structural_diff import differences

SLOW = 0.30


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "session.jsonl"
    recorded_session(path)
    return path


def replay(recording: Path, *options: str) -> LineClient:
    return LineClient([*WIRETAP, "replay", str(recording), *options])


def text_of(received: Any) -> str:
    return str(received.message["result"]["content"][0]["text"])


# -- as the server -------------------------------------------------------------------------------------


def test_a_replayed_server_gives_a_live_client_the_recorded_answers_under_the_live_ids(recording: Path) -> None:
    client = replay(recording, "--pace", "fast")
    got = play_session(client, ids=["a", "b", "c", 40, "e-5"])
    assert client.close() == 0
    assert [got[k].message["id"] for k in ("discover", "list", "echo", "slow", "ask")] == ["a", "b", "c", 40, "e-5"]
    assert got["discover"].message["result"]["supportedVersions"] == ["2026-07-28"]
    assert text_of(got["echo"]) == '{"text": "hi"}'
    assert text_of(got["slow"]) == "slow done"
    assert text_of(got["ask"]) == '{"action": "accept", "content": {"ok": true}}'
    assert got["log"].message == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "warming up"},
    }


def test_progress_notifications_carry_the_live_clients_progress_token(recording: Path) -> None:
    client = replay(recording, "--pace", "fast")
    play_session(client, token=987)
    client.close()
    [progress] = [r.message for r in client.seen if r.message.get("method") == "notifications/progress"]
    assert progress["params"] == {"progressToken": 987, "progress": 1, "total": 2, "message": "halfway"}


def test_recorded_pace_answers_after_the_recorded_latency_and_fast_pace_at_once(recording: Path) -> None:
    latencies = {}
    for pace in ("recorded", "2", "fast"):
        client = replay(recording, "--pace", pace)
        client.call(1, "server/discover", {})
        sent = client.send({"id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
        latencies[pace] = client.until(2).at - sent
        client.close()
    # Timers never fire early, so the lower bounds are exact; a loaded machine only makes things later.
    assert latencies["recorded"] >= SLOW - 0.01
    assert SLOW / 2 - 0.01 <= latencies["2"] < latencies["recorded"]
    assert latencies["fast"] < SLOW / 2 - 0.01, latencies


def test_what_came_after_the_clients_answer_waits_for_the_live_answer(recording: Path) -> None:
    client = replay(recording)
    client.call(1, "server/discover", {})
    client.send({"id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
    question = client.next()
    assert question.message["method"] == "elicitation/create"
    assert question.message["id"] == "ask-1"
    with pytest.raises(queue.Empty):
        client.next(timeout=0.6)  # no answer to the call while the question is open
    answered = client.send({"id": "ask-1", "result": {"action": "decline"}})
    response = client.until(2)
    client.close()
    assert 0.08 <= response.at - answered < 0.35  # the recorded 0.10 s, from the live answer
    assert text_of(response) == '{"action": "accept", "content": {"ok": true}}'


def test_an_unprompted_message_comes_at_its_offset_and_never_before_what_preceded_it(recording: Path) -> None:
    client = replay(recording)
    client.call(1, "server/discover", {})
    with pytest.raises(queue.Empty):
        client.next(timeout=0.8)  # recorded at 0.32 s, but after tools/list: nothing yet
    listed = client.send({"id": 2, "method": "tools/list", "params": {}})
    client.until(2)
    log = client.next()
    client.close()
    assert log.message["method"] == "notifications/message"
    assert 0.15 <= log.at - listed < 0.5


def test_a_request_with_no_match_gets_an_error_naming_the_closest_recorded_request(recording: Path) -> None:
    client = replay(recording, "--pace", "fast")
    client.call(1, "server/discover", {})
    miss = client.call(2, "tools/call", {"name": "echo", "arguments": {"text": "bye"}})
    assert client.close() == 0
    error = miss.message["error"]
    assert error["code"] == MISS_CODE
    assert "closest is #3 tools/call" in error["message"]
    assert 'params.arguments.text: recorded "hi", live "bye"' in error["message"]
    assert error["data"]["closest"]["number"] == 3
    stderr = client.stderr.decode()
    assert "1 request(s) had no recorded match" in stderr
    assert 'tools/call {"name":"echo","arguments":{"text":"bye"}}' in stderr


def test_strict_exits_non_zero_when_a_request_had_no_match(recording: Path) -> None:
    client = replay(recording, "--pace", "fast", "--strict")
    client.call(1, "tools/call", {"name": "nope", "arguments": {}})
    assert client.close() == 1
    clean = replay(recording, "--pace", "fast", "--strict")
    clean.call(1, "server/discover", {})
    assert clean.close() == 0


def test_match_on_and_ignore_decide_what_must_agree(recording: Path) -> None:
    for options in (["--match-on", "method,name"], ["--ignore", "text"]):
        client = replay(recording, "--pace", "fast", "--strict", *options)
        answer = client.call(1, "tools/call", {"name": "echo", "arguments": {"text": "bye"}})
        assert client.close() == 0, options
        assert text_of(answer) == '{"text": "hi"}'


def test_a_repeated_request_gets_the_recorded_answer_again_and_the_summary_counts_it(
    recording: Path, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.json"
    client = replay(recording, "--pace", "fast", "--summary", str(summary))
    first = client.call(1, "tools/list", {})
    again = client.call(2, "tools/list", {})
    client.close()
    assert first.message["result"] == again.message["result"]
    assert json.loads(summary.read_text()) | {"recording": None} == {
        "recording": None,
        "requests": 2,
        "matched": 2,
        "repeated": 1,
        "polls_by_task_clock": 0,
        "misses": [],
    }


def test_a_replayed_server_over_http_answers_posts_with_json_or_an_event_stream(recording: Path) -> None:
    command = [*WIRETAP, "replay", str(recording), "--pace", "fast", "--listen", "127.0.0.1:0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/")
            echo = {"name": "echo", "arguments": {"text": "hi"}}
            status, kind, body = post(url, {"id": 7, "method": "tools/call", "params": echo})
            assert (status, kind) == (200, "application/json")
            assert json.loads(body)["id"] == 7
            slow = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "t"}}
            status, kind, body = post(url, {"id": 8, "method": "tools/call", "params": slow})
            assert (status, kind) == (200, "text/event-stream")
            events = [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")]
            assert [e.get("method") for e in events] == ["notifications/progress", None]
            assert events[0]["params"]["progressToken"] == "t" and events[1]["id"] == 8
            assert post(url, {"method": "notifications/initialized"})[0] == 202
            with pytest.raises(urllib.error.HTTPError, match="405") as refused:  # no GET stream was recorded
                urllib.request.urlopen(url, timeout=10)
            refused.value.close()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=10)
    assert proc.returncode == 0


def post(url: str, body: dict[str, Any]) -> tuple[int, str, str]:
    """POST one JSON-RPC message as an MCP Streamable HTTP client does: (status, content type, body)."""
    data = json.dumps({"jsonrpc": "2.0", **body}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers.get("Content-Type", "").split(";")[0], response.read().decode()


# -- as the client -------------------------------------------------------------------------------------


def run_client(recording: Path, server: list[str], *options: str) -> subprocess.CompletedProcess[str]:
    command = [*WIRETAP, "replay", str(recording), "--as", "client", *options, "--", *server]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_replaying_the_client_against_the_real_server_finds_no_difference(recording: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.jsonl"
    result = run_client(recording, TASK_SERVER, "--out", str(again))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "5 response(s) compared, 0 differ" in result.stderr
    # The new run is a recording like any other: the same conversation, the server's question answered.
    from support.taprun import settled_read_all

    _, events, _ = settled_read_all(again)
    sent = [e["msg"].get("method", "answer") for e in events if e["kind"] == "message" and e["dir"] == "c2s"]
    assert sent == ["server/discover", "tools/list", "tools/call", "tools/call", "tools/call", "answer"]


def test_a_server_that_answers_differently_is_a_difference_and_the_exit_status_says_so(recording: Path) -> None:
    result = run_client(recording, [*TASK_SERVER, "--shout"], "--pace", "fast")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        '#3 tools/call {"name":"echo","arguments":{"text":"hi"}}: result.content[0].text: '
        'recorded "{\\"text\\": \\"hi\\"}", live "{\\"TEXT\\": \\"HI\\"}"'
    ]
    assert "5 response(s) compared, 1 differ" in result.stderr


def test_a_server_that_prints_its_usage_and_exits_is_named_at_once_with_its_status_and_stderr(
    recording: Path, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.json"
    result = run_client(recording, [*TASK_SERVER, "--no-such-option"], "--pace", "fast", "--summary", str(summary))
    assert result.returncode == 3  # could not be started, as a command that is not there (1: it differs)
    said = result.stderr.splitlines()
    assert said[-1].startswith("wiretap replay: the server exited with status 2 before answering anything; ")
    assert "; its stderr ended: usage: replay_task_server.py " in said[-1]  # its last lines, on one line
    assert said[-1].endswith(" / replay_task_server.py: error: unrecognized arguments: --no-such-option")
    assert "usage: replay_task_server.py" in said[0]  # its stderr, passed through as it came
    assert "differ" not in result.stderr and "Traceback" not in result.stderr
    assert json.loads(summary.read_text())["unreachable"].startswith("the server exited with status 2")


def test_a_server_that_exits_midway_leaves_the_rest_unanswered_at_once_and_says_how_it_exited(
    recording: Path,
) -> None:
    result = run_client(recording, [*TASK_SERVER, "--die-after", "2"], "--pace", "fast")
    assert result.returncode == 1
    missing = [line for line in result.stdout.splitlines() if line.endswith(": no live response")]
    assert [line.split()[0] for line in missing] == ["#3", "#4", "#5"]
    assert result.stdout.splitlines()[-1] == (
        "the server exited with status 1 before the recorded client was done; "
        "its stderr ended: replay_task_server: giving up after 2 requests"
    )
    assert "5 response(s) compared, 3 differ" in result.stderr


# -- the pieces ----------------------------------------------------------------------------------------


def test_volatile_keys_and_timestamps_never_count() -> None:
    volatile = Volatile()
    a = {"_meta": {"progressToken": 1, "io.modelcontextprotocol/clientInfo": {"version": "1"}}, "at": "x"}
    b = {"_meta": {"progressToken": 9, "io.modelcontextprotocol/clientInfo": {"version": "2"}}, "at": "x"}
    assert volatile.normalize(a) == volatile.normalize(b) == {"at": "x"}
    assert volatile.normalize({"when": "2026-11-30T12:24:46.428Z"}) == {"when": TIMESTAMP_PLACEHOLDER}
    assert Volatile.with_extra(["at"]).normalize({"at": 1, "b": 2}) == {"b": 2}


def test_differences_name_the_path_and_tell_booleans_from_numbers() -> None:
    found = differences({"a": [1, {"b": True}], "c": 1}, {"a": [1, {"b": 1}], "d": 2})
    assert [d.describe() for d in found] == [
        "a[1].b: recorded true, live 1",
        "c: only recorded (1)",
        "d: only live (2)",
    ]
    assert differences({"n": 1}, {"n": 1.0}) == []


def test_matchers_say_what_differed_and_the_closest_request_passes_the_most() -> None:
    volatile = Volatile()
    recorded = [
        Request.of({"method": "tools/list", "params": {}}, volatile),
        Request.of({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}}}, volatile),
        Request.of({"method": "tools/call", "params": {"name": "mul", "arguments": {"a": 2}}}, volatile),
    ]
    live = Request.of({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2}}}, volatile)
    assert failures(recorded[1], live, ("method", "params")) == ["params.arguments.a: recorded 1, live 2"]
    assert failures(recorded[1], live, ("method", "name")) == []
    near = closest(recorded, live, ("method", "params"))
    assert near is not None and near.index == 1
    assert parse_match_on("method, arguments") == ("method", "arguments")
    with pytest.raises(ValueError, match="unknown matcher"):
        parse_match_on("method,body")


def test_pace_is_recorded_fast_or_a_positive_factor() -> None:
    assert Pace.parse("recorded").live(2.0) == 2.0
    assert Pace.parse("fast").live(2.0) == 0.0
    assert Pace.parse("4").live(2.0) == 0.5
    for bad in ("0", "-1", "slow", "inf"):
        with pytest.raises(ValueError, match="--pace"):
            Pace.parse(bad)
