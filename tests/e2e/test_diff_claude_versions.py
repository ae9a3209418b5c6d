"""``wiretap diff`` between real Claude Code 2.1.197 and 2.1.332 sessions: every difference, nothing else.

Both versions, wrapped, call ``echo`` on the behaviour scenario server over stdio (both eras; it asks
for a confirmation before answering, and ignores SIGINT so the whole shutdown sequence shows) and
``add`` on the MCP Python SDK's Streamable HTTP server, with the same prompt and fake Messages API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support.claude import offline_env, write_mcp_config
from support.codex_gemini import SCENARIO, WIRETAP, run_client, sdk_http_server

pytestmark = pytest.mark.slow

SCENARIO_ARGS = [str(SCENARIO), "--both-eras", "--no-roots", "--ignore-sigint"]


def wrapped_claude(binary: Path, root: Path, http_url: str) -> Path:
    (root / "project").mkdir(parents=True)
    (root / "tmp").mkdir()
    script = [ToolUse("mcp__app__echo", {"text": "hi"}), ToolUse("mcp__web__add", {"a": 2, "b": 40})]
    with FakeMessagesAPI(script) as api:
        env = offline_env(root, api.url) | {"TMPDIR": str(root / "tmp")}
        servers = {
            "app": {"type": "stdio", "command": sys.executable, "args": SCENARIO_ARGS},
            "web": {"type": "http", "url": http_url},
        }
        config = write_mcp_config(root / "mcp.json", servers)
        claude = [str(binary), "-p", "go", "--mcp-config", str(config), "--strict-mcp-config"]
        claude += ["--allowedTools", "mcp__app__echo,mcp__web__add", "--output-format", "stream-json", "--verbose"]
        result = run_client(
            [*WIRETAP, "--out", str(root / "session"), "--", *claude, "--no-session-persistence"], env, root / "project"
        )
        assert result.returncode == 0, result.stderr[-3000:]
        answers = json.dumps([r.get("content") for r in api.tool_results()])
        assert '\\"action\\": \\"cancel\\"' in answers and "42" in answers, answers
    return root / "session"


@pytest.fixture(scope="module")
def sections(mcp_sdk_python: Path, claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from support import peers

    root = tmp_path_factory.mktemp("claude-versions")
    (root / "http").mkdir()
    with sdk_http_server(mcp_sdk_python, root / "http") as url:
        old = wrapped_claude(peers.claude_code_old(), root / "old", url)
        new = wrapped_claude(claude_code_bin, root / "new", url)
    result = subprocess.run(
        [*WIRETAP, "diff", "--format", "json", str(old), str(new)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["unpaired"] == []
    return {server["name"]: {k: v for k, v in server["sections"].items() if v} for server in document["servers"]}


HANDSHAKE = [
    "method: initialize → server/discover",
    "attempts: initialize (ok) → server/discover (ok)",
    "protocol version: 2025-11-25 → 2026-07-28",
    "era: session (initialize, up to 2025-11-25) → stateless (2026-07-28 on)",
    "client version: 2.1.197 → 2.1.332",
    "capabilities.roots.listChanged: added true",
    "capabilities.elicitation.form: added {}",
    "capabilities.elicitation.url: added {}",
    "_meta key added: io.modelcontextprotocol/clientCapabilities",
    "_meta key added: io.modelcontextprotocol/clientInfo",
    "_meta key added: io.modelcontextprotocol/protocolVersion",
    "meta on: some requests → every request",
    "id types: number → number, string",
]


def test_the_handshake_differences_are_named_on_both_transports(sections: dict[str, Any]) -> None:
    for server in ("app", "web"):
        lines = sections[server]["handshake"]
        assert lines[: len(HANDSHAKE)] == HANDSHAKE, lines
        # Not in the list, but true: 2.1.332 orders its keys differently (its probe and listen
        # requests as jsonrpc,id,method,params).
        assert [line.split(":")[0] for line in lines[len(HANDSHAKE) :]] == ["key order"]


def test_the_elicitation_is_answered_by_a_retry_instead_of_a_result(sections: dict[str, Any]) -> None:
    app = sections["app"]
    assert app["server-initiated requests"] == [
        "+ elicitation/create (input_required): tools/call retried with inputResponses: cancel",
        "- elicitation/create: result: cancel",
    ]
    assert "+→ tools/call +inputResponses" in app["method sequence"]
    assert not any("(repeated)" in line for line in app["method sequence"])


def test_the_http_transport_switch_from_a_session_to_stateless_posts_is_named(sections: dict[str, Any]) -> None:
    assert sections["web"]["HTTP transport"] == [
        "session id: True → False",
        "get stream: True → False",
        "mcp headers: mcp-protocol-version, mcp-session-id → mcp-method, mcp-name, mcp-protocol-version",
        "protocol version header: 2025-11-25 → 2026-07-28",
        "methods: GET, POST → POST",
    ]


def test_nothing_else_differs(sections: dict[str, Any]) -> None:
    # Both versions stop a stdio server the same way (SIGINT, SIGTERM 100 ms later): no shutdown section.
    assert set(sections["app"]) == {"handshake", "method sequence", "server-initiated requests", "questions"}
    assert set(sections["web"]) == {"handshake", "method sequence", "HTTP transport"}
