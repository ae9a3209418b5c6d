"""Every secret shape in every place a secret can reach a recording or a terminal: none gets through,
and nothing harmless is touched (tests/corpora/secrets.jsonl and harmless.jsonl)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from taprun import run_tap

from wiretap.http.headers import recorded_headers
from wiretap.recording.paths import default_name, safe_name
from wiretap.recording.streams import StderrStream
from wiretap.wire.messages import record_frame
from wiretap.wire.redact import redact_argv, redact_query, redact_url

CORPORA = Path(__file__).parent / "corpora"
SECRETS = [json.loads(line) for line in (CORPORA / "secrets.jsonl").read_text().splitlines()]
HARMLESS = [json.loads(line)["text"] for line in (CORPORA / "harmless.jsonl").read_text().splitlines()]


def _recorded(frame: str) -> str:
    recorded = record_frame(frame.encode(), redact=True)
    msg = bytes(recorded.msg_bytes or b"").decode()
    return msg + json.dumps(recorded.fields, ensure_ascii=False)


def _message(text: str) -> str:
    return _recorded(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}))


def _tool_result_json(text: str) -> str:
    inner = json.dumps({"log": text, "ok": True})
    return _recorded(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": inner}]}}))


def _arguments(text: str) -> str:
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "run", "arguments": {"q": text}}}
    return _recorded(json.dumps(call))


def _raw_frame(text: str) -> str:
    return _recorded(text)


def _stderr(text: str) -> str:
    stream = StderrStream(redact=True)
    events = [e for e, _ in stream.feed(0.0, text.encode() + b"\n")]
    return json.dumps(events, ensure_ascii=False)


def _stderr_json_line(text: str) -> str:
    return _stderr(json.dumps({"level": "error", "msg": text}))


def _header(text: str) -> str:
    return json.dumps(recorded_headers([("X-Debug", text)], redact=True), ensure_ascii=False)


def _request_target(text: str) -> str:
    return redact_url("/mcp/" + quote(text, safe="")) + " " + redact_query("debug=" + quote(text, safe=""))


def _upstream_url(text: str) -> str:
    return redact_url("https://mcp.example.com/mcp?trace=" + quote(text, safe=":/=@"))


def _argv(text: str) -> str:
    return json.dumps(redact_argv(["server", "--flag", text]), ensure_ascii=False)


def _client_argv_mcp_config(text: str) -> str:
    config = {"mcpServers": {"s": {"command": "srv", "args": [text], "env": {"DEBUG": text}}}}
    return json.dumps(redact_argv(["claude", "--mcp-config", json.dumps(config)]), ensure_ascii=False)


def _file_name(text: str) -> str:
    return safe_name(default_name(redact_argv(["node", text, "--stdio"])))


PLACES: dict[str, Callable[[str], str]] = {
    "message text": _message,
    "tool result JSON in a string": _tool_result_json,
    "request arguments": _arguments,
    "raw frame": _raw_frame,
    "stderr": _stderr,
    "stderr JSON line": _stderr_json_line,
    "HTTP header": _header,
    "request target": _request_target,
    "upstream URL": _upstream_url,
    "argv": _argv,
    "client argv --mcp-config": _client_argv_mcp_config,
    "file name": _file_name,
}
LINE_PLACES = {"stderr", "HTTP header", "raw frame"}  # a PEM block spans lines; these hold one line


def _fits(place: str, text: str) -> bool:
    return "\n" not in text or place not in LINE_PLACES


def _leaks(secret: str, output: str) -> bool:
    spellings = {secret, json.dumps(secret)[1:-1], quote(secret, safe=""), safe_name(secret)}
    return any(s in output for s in spellings if len(s) >= 8)


def test_the_secret_corpus_has_at_least_forty_shapes() -> None:
    assert len({row["shape"] for row in SECRETS}) >= 40
    assert len(HARMLESS) >= 40


def test_no_secret_shape_leaks_from_any_place() -> None:
    leaks = [
        f"{row['shape']} in {place}: {output[:160]}"
        for row in SECRETS
        for place, record in PLACES.items()
        if _fits(place, row["text"]) and _leaks(row["secret"], output := record(row["text"]))
    ]
    assert leaks == []


@pytest.mark.parametrize("place", [p for p in PLACES if p not in ("file name",)])
def test_harmless_text_is_recorded_exactly_as_it_was(place: str) -> None:
    changed = [text for text in HARMLESS if _fits(place, text) and "[redacted" in PLACES[place](text)]
    assert changed == []


def test_a_clean_message_is_recorded_verbatim() -> None:
    for text in HARMLESS:
        frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}})
        recorded = record_frame(frame.encode(), redact=True)
        assert recorded.msg_bytes == frame.encode() and "redacted" not in recorded.fields, text


_ECHO_TO_STDERR = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    request = json.loads(line)\n"
    "    for text in request['params']['texts']:\n"
    "        print(text.replace('\\n', ' '), file=sys.stderr, flush=True)\n"
    "        print(json.dumps({'level': 'info', 'msg': text}), file=sys.stderr, flush=True)\n"
    "    print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': request['params']}), flush=True)\n"
)


def test_a_tapped_server_leaks_no_secret_into_its_recording_or_file_name(tmp_path: Path) -> None:
    texts = [row["text"] for row in SECRETS]
    argv_secret = SECRETS[0]["text"].split()[1]
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"texts": texts}}
    server = [sys.executable, "-c", _ECHO_TO_STDERR, argv_secret, "--token", "t0ken-in-argv-123"]
    recording = tmp_path / "rec.jsonl"
    run = run_tap(recording, server, [json.dumps(request).encode() + b"\n"])
    written = recording.read_text()
    assert len(run.messages()) == 2 and len(run.of_kind("stderr")) == 2 * len(texts)
    leaked = [row["shape"] for row in SECRETS if _leaks(row["secret"], written)]
    assert leaked == [] and "t0ken-in-argv-123" not in written and argv_secret not in written
