"""``wiretap replay`` as the server, attacked: malformed JSON-RPC, deep nesting, a client that writes its
requests and closes its end at once. The recording is the scenario session of tests/support/replayrun.py."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.replayrun import WIRETAP, LineClient, recorded_session

DEEP = 5_000


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay-robust") / "session.jsonl"
    recorded_session(path)
    return path


@pytest.fixture(scope="module")
def url(recording: Path) -> Iterator[str]:
    command = [*WIRETAP, "replay", str(recording), "--pace", "fast", "--listen", "127.0.0.1:0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            yield proc.stdout.readline().strip()
        finally:
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def post_raw(url: str, data: bytes) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            return response.status, json.loads(body) if body else None
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, json.loads(refused.read())


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def tools_list(message_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message_id, "method": "tools/list", "params": {}}).encode()


@pytest.mark.parametrize("body", ["[]", "{}", "null", '{"method":123}', '{"jsonrpc":"2.0","id":3}', "7"])
def test_http_replay_answers_json_that_is_not_json_rpc_with_an_invalid_request_error(url: str, body: str) -> None:
    status, answer = post_raw(url, body.encode())
    assert status == 400
    assert answer["error"]["code"] == -32600
    assert answer["jsonrpc"] == "2.0"


def test_http_replay_answers_a_body_that_is_not_json_with_a_parse_error(url: str) -> None:
    status, answer = post_raw(url, b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert (status, answer["error"]["code"], answer["id"]) == (400, -32700, None)


def test_http_replay_answers_each_invalid_member_of_a_batch(url: str) -> None:
    status, answer = post_raw(url, b'[{}, {"method": 123, "id": 4}]')
    assert status == 400
    assert [(a["id"], a["error"]["code"]) for a in answer] == [(None, -32600), (4, -32600)]


def test_http_replay_survives_json_nested_five_thousand_deep_and_answers_the_next_request(url: str) -> None:
    status, answer = post_raw(url, nested(DEEP).encode())
    assert status == 400 and answer["error"]["code"] in (-32700, -32600)
    inside = f'{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"arguments":{nested(DEEP)}}}}}'
    status, answer = post_raw(url, inside.encode())
    assert status == 400 and answer["error"]["code"] in (-32700, -32600)
    shallow = f'{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"arguments":{nested(300)}}}}}'
    status, answer = post_raw(url, shallow.encode())
    assert (status, answer["id"], answer["error"]["code"]) == (400, 10, -32600)
    status, answer = post_raw(url, tools_list(11))
    assert status == 200 and answer["id"] == 11 and answer["result"]["tools"]


def test_stdio_replay_survives_lines_nested_five_thousand_deep(recording: Path) -> None:
    client = LineClient([*WIRETAP, "replay", str(recording), "--pace", "fast"])
    assert client.proc.stdin is not None
    client.proc.stdin.write(nested(DEEP).encode() + b"\n")
    request = f'{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"a":{nested(300)}}}}}'
    client.proc.stdin.write(request.encode() + b"\n")
    client.proc.stdin.flush()
    refused = client.until("deep")
    answered = client.call(2, "tools/list", {})
    assert client.close() == 0
    assert refused.message["error"]["code"] == -32600
    assert answered.message["result"]["tools"]
    assert b"Traceback" not in client.stderr


@pytest.mark.parametrize("pace", ["recorded", "fast"])
def test_a_one_shot_client_that_closes_stdin_at_once_gets_every_answer(recording: Path, pace: str) -> None:
    calls = [
        ("server/discover", {}),
        ("tools/list", {}),
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        ("tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}),
    ]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        for n, (method, params) in enumerate(calls * 5)
    ]
    command = [*WIRETAP, "replay", str(recording), "--pace", pace]
    done = subprocess.run(command, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    responses = [a for a in answers if "method" not in a]
    assert sorted(a["id"] for a in responses) == list(range(20))
    assert all("result" in a for a in responses)


def rewrite_echo_answer(path: Path, *, same_size: bool) -> None:
    """The recorded answer to ``echo`` "hi" says "HI" now: rewritten in place, as an editor or a careless
    script might."""
    data = path.read_bytes()
    answer = next(line for line in data.splitlines() if b'"dir":"s2c"' in line and b'\\"hi\\"' in line)
    changed = answer.replace(b'\\"hi\\"', b'\\"HI\\"' if same_size else b'\\"HIGH\\"')
    with path.open("r+b") as f:
        f.write(data.replace(answer, changed))


ECHO = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}


@pytest.mark.parametrize("same_size", [True, False], ids=["same_size", "other_size"])
def test_a_recording_rewritten_during_a_stdio_replay_is_never_served_changed(
    recording: Path, tmp_path: Path, same_size: bool
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(recording.read_bytes())
    client = LineClient([*WIRETAP, "replay", str(path), "--pace", "fast"])
    assert client.call(1, "tools/list", {}).message["result"]["tools"]  # the script is loaded and serving
    rewrite_echo_answer(path, same_size=same_size)
    client.send(ECHO)
    status = client.close()
    served = [r.message for r in client.seen if r.message.get("id") == 3]
    assert all(b"HI" not in json.dumps(m).encode() for m in served), served
    stderr = client.stderr.decode()
    assert status == 2, stderr
    assert "the recording changed while it was replayed" in stderr and str(path) in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr


def test_a_recording_rewritten_during_an_http_replay_is_never_served_changed(recording: Path, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(recording.read_bytes())
    command = [*WIRETAP, "replay", str(path), "--pace", "fast", "--listen", "127.0.0.1:0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert post_raw(url, tools_list(1))[0] == 200
        rewrite_echo_answer(path, same_size=True)
        try:
            answer = post_raw(url, json.dumps(ECHO).encode())[1]
        except (urllib.error.URLError, ConnectionError):  # (the server stopped before it answered)
            answer = None
        try:
            _, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"the replay went on serving: {proc.communicate()[1]}")
    assert "HI" not in json.dumps(answer), answer
    assert proc.returncode == 2, stderr
    assert "the recording changed while it was replayed" in stderr and str(path) in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
