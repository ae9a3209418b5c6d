"""``wiretap mcp`` with real clients: the MCP Python SDK (both eras) lists and calls every tool, and
the real Claude Code (offline, fake Messages API) calls list_sessions and then fetches a finding, whose
answers reach the model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support import paths
from support.claude import offline_env, run_claude, stdio_server, write_mcp_config
from support.mcp_sessions import SESSION, session_workdir

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
WIRETAP_MCP = [sys.executable, "-m", "wiretap", "mcp"]
CALLS: list[list[Any]] = [
    ["list_sessions", {}],
    ["list_recordings", {}],
    ["timeline", {"path": SESSION, "method": "tools/list", "direction": "out"}],
    ["report", {"path": SESSION, "section": "findings"}],
    ["get_message", {"recording": f"{SESSION}/beta.jsonl", "line": 4}],
    ["search", {"text": "Starting scenario"}],
    ["diff", {"a": SESSION, "b": SESSION}],
    ["timeline", {"path": "/etc"}],
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_workdir(tmp_path_factory.mktemp("mcp-real"))


def structured(call: dict[str, Any]) -> Any:
    assert not call.get("isError"), call
    assert json.loads(call["content"][0]["text"]) == call["structuredContent"]
    return call["structuredContent"]


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_sdk_client_lists_the_tools_and_calls_each(
    mcp_sdk_python: Path, workdir: Path, mode: str, version: str
) -> None:
    argv = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_wiretap_client.py"), mode, json.dumps(CALLS)]
    done = subprocess.run([*argv, "--", *WIRETAP_MCP], cwd=workdir, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["protocol_version"] == version
    names = ["list_sessions", "list_recordings", "timeline", "report", "get_message", "search", "diff"]
    assert [tool["name"] for tool in got["tools"]] == names
    sessions, recordings, rows, findings, message, search, diff, refused = got["calls"]
    assert [s["path"] for s in structured(sessions)["sessions"]] == [SESSION]
    assert [r["path"] for r in structured(recordings)["recordings"]] == ["wiretap-recordings/big.jsonl"]
    assert [(r["server"], r["title"]) for r in structured(rows)["rows"]] == [
        ("alpha", "tools/list"),
        ("beta", "tools/list"),
    ]
    assert [f["code"] for f in structured(findings)["findings"]] == ["stdout-not-json"]
    assert structured(message)["event"]["raw"] == "Starting scenario server v1.0 on stdio..."
    assert [(m["server"], m["line"]) for m in structured(search)["matches"]] == [("beta", 4)]
    assert structured(diff)["differs"] is False
    assert refused["isError"] is True
    assert refused["content"] == [
        {"type": "text", "text": "/etc: outside the folders wiretap mcp reads (wiretap-sessions, wiretap-recordings)"}
    ]


def tool_result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def test_claude_code_lists_the_sessions_then_fetches_a_finding_and_the_answers_reach_the_model(
    claude_code_bin: Path, workdir: Path, tmp_path: Path
) -> None:
    script = [
        ToolUse("mcp__wiretap__list_sessions", {}),
        ToolUse("mcp__wiretap__report", {"path": SESSION, "section": "findings", "limit": 1}),
    ]
    config = write_mcp_config(tmp_path / "mcp.json", {"wiretap": stdio_server(WIRETAP_MCP[0], WIRETAP_MCP[1:])})
    with FakeMessagesAPI(script) as api:
        run = run_claude(
            claude_code_bin,
            "Which MCP server misbehaved in my last session?",
            env=offline_env(tmp_path, api.url),
            cwd=workdir,
            mcp_config=config,
            allowed_tools=[step.name for step in script],
        )
        conversation = api.conversation()
    assert run.returncode == 0, run.describe()
    assert run.mcp_status("wiretap") == "connected", run.describe()
    assert len(conversation) == 3
    after_list = [b for b in conversation[1].body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    after_report = [b for b in conversation[2].body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    (listed,), (reported,) = after_list, after_report
    assert not listed.get("is_error") and not reported.get("is_error")
    sessions = json.loads(tool_result_text(listed))
    assert [(s["path"], [x["name"] for x in s["servers"]]) for s in sessions["sessions"]] == [
        (SESSION, ["alpha", "beta"])
    ]
    findings = json.loads(tool_result_text(reported))
    assert [(f["code"], f["server"]) for f in findings["findings"]] == [("stdout-not-json", "beta")]
    assert "Starting scenario server v1.0 on stdio..." in findings["findings"][0]["message"]
