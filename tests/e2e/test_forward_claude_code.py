"""Real Claude Code and an OAuth-protected server (the TS SDK's strict example, over TLS): a login done
without wiretap is found and used by ``wiretap -- claude -p``, whose HTTP servers go through the forward
proxy with their entries untouched. The call succeeds, the session holds it, the user's credentials are
left as they were, and no token is in any file wiretap wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support.claude import offline_env, parse_stream_json
from support.oauthpeer import PEER_SCRIPTS, oauth_pair

pytestmark = pytest.mark.slow
SERVER = "oauthy"
TOOL = f"mcp__{SERVER}__add"


def _browser(folder: Path) -> Path:
    path = folder / "browser.sh"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{PEER_SCRIPTS / "follow_login.py"}" "$@"\n')
    path.chmod(0o700)
    return path


def _login(claude: Path, env: dict[str, str], cwd: Path, url: str) -> None:
    add = [str(claude), "mcp", "add", "--transport", "http", "-s", "user", SERVER, url]
    subprocess.run(add, env=env, cwd=cwd, check=True, capture_output=True, timeout=60)
    # `mcp login` wants a terminal: script(1) gives it one.
    login = subprocess.run(
        ["script", "-qec", f"{claude} mcp login {SERVER}", "/dev/null"],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert f'Authenticated with "{SERVER}"' in login.stdout, login.stdout + login.stderr


def _tokens(config: Path) -> dict:
    return json.loads((config / ".credentials.json").read_text()).get("mcpOAuth", {})


def test_a_login_made_without_wiretap_is_used_through_the_forward_proxy(
    tmp_path: Path, claude_code_bin: Path, ts_sdk: Path, node_24: Path
) -> None:
    if subprocess.run(["script", "--version"], capture_output=True).returncode != 0:
        pytest.skip("script(1) from util-linux is not here to give `claude mcp login` a terminal")
    with (
        oauth_pair(node_24, ts_sdk, tmp_path, issuer_host="127.0.0.1") as pair,
        FakeMessagesAPI([ToolUse(TOOL, {"a": 2, "b": 40})]) as api,
    ):
        env = offline_env(tmp_path, api.url)
        env |= {"NODE_EXTRA_CA_CERTS": str(pair.ca_file), "LOGIN_CA": str(pair.ca_file)}
        env["BROWSER"] = str(_browser(tmp_path))
        cwd = tmp_path / "work"
        cwd.mkdir()
        config = Path(env["CLAUDE_CONFIG_DIR"])
        _login(claude_code_bin, env, cwd, pair.mcp)
        before = _tokens(config)
        assert len(before) == 1
        token = next(iter(before.values()))["accessToken"]
        session = tmp_path / "session"
        argv = [sys.executable, "-m", "wiretap", "--out", str(session), "--", str(claude_code_bin)]
        argv += ["-p", "add 2 and 40", "--allowedTools", TOOL, "--output-format", "stream-json", "--verbose"]
        argv += ["--no-session-persistence"]
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=180)
    events = parse_stream_json(done.stdout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = [
        block
        for e in events
        if e.get("type") == "user"
        for block in e.get("message", {}).get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert [r.get("is_error", False) for r in results] == [False], results
    assert "42" in json.dumps(results)
    assert _tokens(config) == before  # found, used, and nothing added
    manifest = json.loads((session / "manifest.json").read_text())
    server = next(s for s in manifest["servers"] if s["name"] == SERVER)
    recorded = [json.loads(line) for line in (session / server["recording"]).read_text().splitlines()]
    calls = [e for e in recorded if e.get("kind") == "message" and e.get("msg", {}).get("method") == "tools/call"]
    assert len(calls) == 1
    answers = [
        e for e in recorded if e.get("kind") == "message" and e.get("msg", {}).get("id") == calls[0]["msg"]["id"]
    ]
    assert [a["dir"] for a in answers] == ["c2s", "s2c"] and "42" in json.dumps(answers[1]["msg"])
    written = "".join(p.read_text(errors="replace") for p in session.rglob("*") if p.is_file())
    assert token not in written
    assert "[redacted:" in written
