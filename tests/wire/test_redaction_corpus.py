"""Every secret shape in every place a secret can reach a recording or a terminal: none gets through,
and nothing harmless is touched (tests/corpora/secrets.jsonl and harmless.jsonl)."""

from __future__ import annotations

import json
import os
import pty
import re
import selectors
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from support import paths
from support.proxyrun import running_proxy
from support.taprun import run_tap

from wiretap.recording.paths import default_name, safe_name
from wiretap.recording.streams import StderrStream
from wiretap.wire.http.headers import recorded_headers
from wiretap.wire.messages import record_frame
from wiretap.wire.redact import redact_argv, redact_query, redact_url
from wiretap.wrap.session import Session

CORPORA = paths.CORPORA
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


def _manifest(argv: list[str], env: dict[str, str] | None = None) -> str:
    """The manifest a session of ``claude ARGV`` starts with, in an empty home."""
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        session = Session(["claude", *argv], out=home / "session", cwd=home, env={"HOME": folder, **(env or {})})
        return json.dumps(session.manifest, ensure_ascii=False)


def _manifest_argv(text: str) -> str:
    config = {"mcpServers": {"s": {"command": "srv", "args": ["--verbose", text], "env": {"DEBUG": text}}}}
    return _manifest(["-p", text, "--mcp-config", json.dumps(config)])


def _manifest_environment(text: str) -> str:
    return _manifest(["-p", "hi"], {"MCP_DEBUG": text, "API_KEY": text})


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
    "manifest argv": _manifest_argv,
    "manifest environment": _manifest_environment,
}


def _config_holding(secret: str) -> str:
    quoted = quote(secret, safe="")
    web = {"type": "http", "url": f"https://h/mcp?api_key={quoted}", "headers": {"Authorization": f"Bearer {secret}"}}
    local = {"command": "srv", "args": ["--api-key", secret], "env": {"GITHUB_TOKEN": secret}}
    return json.dumps({"mcpServers": {"web": web, "local": local}})


MANIFEST_FORMS: dict[str, Callable[[str], list[str]]] = {
    "--api-key VALUE": lambda secret: ["--api-key", secret],
    "--api-key=VALUE": lambda secret: [f"--api-key={secret}"],
    "--token=VALUE": lambda secret: [f"--token={secret}"],
    "Authorization header": lambda secret: ["-H", f"Authorization: {secret}"],
    "Authorization: Bearer": lambda secret: ["--header", f"Authorization: Bearer {secret}"],
    "URL userinfo": lambda secret: [f"https://user:{quote(secret, safe='')}@h/mcp"],
    "URL query": lambda secret: [f"https://h/mcp?access_token={quote(secret, safe='')}&v=1"],
    "--mcp-config JSON": lambda secret: ["--mcp-config", _config_holding(secret)],
}
"""Where a client's own argv puts a secret's bare value (its place in the argv says what it is)."""
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


def test_no_secret_value_leaks_from_a_manifest_in_any_form_a_client_takes_it() -> None:
    leaks = [
        f"{row['shape']} as {form}: {output[:160]}"
        for row in SECRETS
        for form, argv in MANIFEST_FORMS.items()
        if _leaks(row["secret"], output := _manifest(argv(row["secret"])))
    ]
    assert leaks == []


def test_a_json_config_in_the_manifests_argv_is_redacted_inside_and_stays_json() -> None:
    argv = json.loads(_manifest(["--mcp-config", _config_holding("opaque-Value-7"), "--strict-mcp-config"]))
    assert argv["client_argv"][:2] == ["claude", "--mcp-config"] and argv["client_argv"][3:] == ["--strict-mcp-config"]
    config = json.loads(argv["client_argv"][2])
    marks = set(re.findall(r"\[redacted:[0-9a-f]{4}\]", argv["client_argv"][2]))
    assert len(marks) == 1
    mark = marks.pop()
    assert config == {
        "mcpServers": {
            "web": {"type": "http", "url": f"https://h/mcp?api_key={mark}", "headers": {"Authorization": mark}},
            "local": {"command": "srv", "args": ["--api-key", mark], "env": {"GITHUB_TOKEN": mark}},
        }
    }


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


def _upstream_holding_every_secret() -> str:
    """An upstream URL with each secret in its userinfo, as a secret query parameter and inside a text one."""
    user = quote(SECRETS[0]["secret"], safe="")
    query = "&".join(
        f"api_key={quote(row['secret'], safe='')}&note{n}={quote(row['text'], safe='')}"
        for n, row in enumerate(SECRETS)
    )
    return f"http://u:{user}@127.0.0.1:9/mcp?{query}"


def _leaked_shapes(output: str) -> list[str]:
    return [row["shape"] for row in SECRETS if _leaks(row["secret"], output)]


def test_the_proxy_prints_no_secret_of_its_upstream_url_on_a_pipe(tmp_path: Path) -> None:
    with running_proxy(_upstream_holding_every_secret(), tmp_path / "rec.jsonl") as proxy:
        printed = proxy.url
    assert printed == f"http://127.0.0.1:{urlsplit(printed).port}/mcp"
    assert _leaked_shapes(printed + proxy.stderr + (tmp_path / "rec.jsonl").read_text()) == []


def _first_line_on_a_terminal(command: list[str]) -> str:
    """Run ``command`` with its stdout on a pseudo-terminal; its first line, once it has printed it."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(follower)
    output = b""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(leader, selectors.EVENT_READ)
            while b"\n" not in output and selector.select(timeout=20):
                output += os.read(leader, 4096)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
        os.close(leader)
    return output.decode().splitlines()[0]


def test_the_proxy_prints_no_secret_of_its_upstream_url_on_a_terminal(tmp_path: Path) -> None:
    upstream = _upstream_holding_every_secret()
    printed = _first_line_on_a_terminal(
        [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream, "--out", str(tmp_path / "rec.jsonl")]
    )
    assert printed == f"http://127.0.0.1:{urlsplit(printed).port}/mcp"
    assert _leaked_shapes(printed) == []


def _secret_of(shape: str) -> str:
    return next(row["secret"] for row in SECRETS if row["shape"] == shape)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_wrapped_session_keeps_its_clients_secrets_out_of_its_folder_and_passes_them_on(
    tmp_path: Path, mode: str
) -> None:
    shapes = ["argv-api-key-flag", "argv-token-flag", "bearer", "url-userinfo", "url-query-api-key"]
    key, token, bearer, password, query_key = map(_secret_of, shapes)
    header, server_key, server_env, in_env = map(_secret_of, ["bearer-lower", "env-api-key", "json-password", "npm"])
    web = {"type": "http", "url": f"http://127.0.0.1:9/mcp?api_key={query_key}", "headers": {"X-Api-Key": header}}
    local = {"command": "srv", "args": ["--api-key", server_key], "env": {"DB_PASSWORD": server_env}}
    bin_dir, got = tmp_path / "bin", tmp_path / "got-config.json"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text('#!/bin/sh\ncp "$2" "$GOT_CONFIG"\n')  # its argv: claude --mcp-config FILE …
    (bin_dir / "claude").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    argv = ["claude", "--strict-mcp-config", "--mcp-config", json.dumps({"mcpServers": {"web": web, "local": local}})]
    argv += ["--api-key", key, f"--token={token}", "-H", f"Authorization: Bearer {bearer}"]
    argv += [f"https://me:{password}@h/mcp"]
    run = subprocess.run(
        [sys.executable, "-m", "wiretap", "--out", "s", *(["--reverse"] if mode == "reverse" else []), "--", *argv],
        cwd=tmp_path,
        env={**env, "GITHUB_TOKEN": in_env, "GOT_CONFIG": str(got)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    secrets = [key, token, bearer, password, query_key, header, server_key, server_env, in_env]
    written = {path.name: path.read_text() for path in (tmp_path / "s").iterdir()}
    if mode == "reverse":
        assert sorted(written) == ["manifest.json", "web.jsonl", "web.proxy.log"]
    else:  # the forward proxy records a server once the client reaches it (this client never does)
        assert sorted(written) == ["browser.sh", "forward.proxy.log", "manifest.json"]
    assert [s for s in secrets if any(s in text for text in [*written.values(), run.stdout, run.stderr])] == []
    given = json.loads(got.read_text())["mcpServers"]
    if mode == "reverse":
        assert given["web"] == {**web, "url": f"http://127.0.0.1:{urlsplit(given['web']['url']).port}/mcp"}
    else:
        assert given["web"] == web
    assert given["local"]["args"][-3:] == ["srv", "--api-key", server_key] and given["local"]["env"] == local["env"]
