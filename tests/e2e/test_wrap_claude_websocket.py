"""``wiretap -- claude`` with a ``type: "ws"`` MCP server: the real Claude Code 2.1.332 reaches it through
wiretap's proxy (the upgrade passed through), calls its tool, and the session holds the JSON-RPC that
crossed in WebSocket frames, the same messages the server itself logged."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scenarios.fake_messages_api import ToolUse
from support import paths
from support.wrapped_claude import PRINT_MODE, Session, run_claude_code, wrapped

pytestmark = pytest.mark.slow

SERVER = paths.SCENARIOS / "ws_mcp_server.py"
SCRIPT = [ToolUse("mcp__web__add", {"a": 2, "b": 40})]


@contextlib.contextmanager
def ws_server(log: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--log", str(log)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            url = proc.stdout.readline().strip() if selector.select(30) else ""
        assert url.startswith("ws://127.0.0.1:"), url
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()


def test_claude_code_calls_a_websocket_servers_tool_through_wiretap_and_the_session_holds_it(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    log = tmp_path / "server.jsonl"
    with ws_server(log) as url:
        config = json.dumps({"mcpServers": {"web": {"type": "ws", "url": url}}})
        argv = [str(claude_code_bin), "-p", "Add.", "--mcp-config", config, "--strict-mcp-config"]
        argv += ["--allowedTools", SCRIPT[0].name, *PRINT_MODE]
        direct = run_claude_code(argv, root=tmp_path, cwd=project, script=SCRIPT)
        assert direct.claude.returncode == 0, direct.claude.describe()
        served_directly = len(log.read_text().splitlines())
        run = run_claude_code(
            wrapped(argv, "--out", str(tmp_path / "session")), root=tmp_path, cwd=project, script=SCRIPT
        )
    assert run.claude.returncode == 0, run.claude.describe()
    assert [r["content"] for r in run.tool_results] == [r["content"] for r in direct.tool_results]
    assert "42" in json.dumps(run.tool_results)
    session = Session.read(tmp_path / "session")
    recording = session.recordings["web"]
    [upgrade] = recording.of_kind("http_request")
    assert upgrade["headers"]["upgrade"].lower() == "websocket"
    [switched] = recording.of_kind("http_response")
    assert switched["status"] == 101
    logged = [json.loads(line) for line in log.read_text().splitlines()][served_directly:]
    recorded = [(e["dir"], e["msg"]) for e in recording.messages()]
    assert recorded == [("c2s" if m["dir"] == "in" else "s2c", m["msg"]) for m in logged]
    [call] = recording.requests("tools/call")
    assert call["msg"]["params"]["arguments"] == {"a": 2, "b": 40}
    assert run.left == []
