"""Acceptance: real Claude Code (offline) under ``wiretap --otlp-endpoint PHOENIX -- claude`` with an HTTP
MCP server; Phoenix holds Claude Code's spans and wiretap's of the tool call in one trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from scenarios.threaded_http import Served, ThreadedHTTP
from support import paths
from support.claude import offline_env
from support.phoenix_backend import Phoenix

pytestmark = pytest.mark.slow
REPO = paths.REPO
TOOL = "mcp__wire__echo"
PROJECT = "claude-joined"
RESULTS = {
    "server/discover": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}},
    "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
    "tools/call": {"content": [{"type": "text", "text": "echoed"}]},
}


class _Echo(BaseHTTPRequestHandler):
    """A 2026-07-28 server with one tool; it notes each request's traceparent header and method."""

    protocol_version = "HTTP/1.1"
    server: Served

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._empty(405)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.server.seen.append((body.get("method"), self.headers.get("traceparent")))
        if body.get("method") not in RESULTS:
            self._empty(202 if "id" not in body else 405)
            return
        result = {"resultType": "complete", **RESULTS[body["method"]]}
        data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


def wait_for_spans(backend: Phoenix, names: set[str], seconds: float = 60) -> list[dict[str, Any]]:
    """Phoenix ingests asynchronously: poll until every name has landed, or the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        spans = backend.spans(PROJECT)
        if names <= {s["name"] for s in spans} or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


@pytest.fixture(scope="module")
def joined(phoenix: Phoenix, claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("claude-otel")
    with ThreadedHTTP(_Echo, "/mcp") as server, FakeMessagesAPI([ToolUse(TOOL, {"text": "hi"})]) as api:
        config = root / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"wire": {"type": "http", "url": server.url}}}))
        env = offline_env(root, api.url) | {
            "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}",
            "PYTHONPATH": str(REPO),
        }
        argv = [
            sys.executable, "-m", "wiretap", "--otlp-endpoint", phoenix.url, "-o", str(root / "session"), "--",
            str(claude_code_bin), "-p", "Call the echo tool.", "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", TOOL, "--output-format", "stream-json", "--verbose",
        ]  # fmt: skip
        run = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stderr[-4000:]
        spans = wait_for_spans(
            phoenix, {"claude_code.tool.execution", "tools/call echo", "wiretap session Claude Code"}
        )
        yield root, list(server.seen), spans


def test_claude_code_sends_the_tool_spans_traceparent_on_its_http_tools_call_only(joined: Any) -> None:
    _, seen, _ = joined
    by_method = {method: header for method, header in seen if method in RESULTS}
    assert by_method["tools/call"] is not None and by_method["tools/call"].startswith("00-")
    assert by_method["server/discover"] is None and by_method["tools/list"] is None


def test_phoenix_holds_claude_codes_and_wiretaps_spans_of_the_tool_call_in_one_trace(joined: Any) -> None:
    _, seen, spans = joined
    header = dict(seen)["tools/call"]
    by_name = {s["name"]: s for s in spans}
    wire, execution = by_name["tools/call echo"], by_name["claude_code.tool.execution"]
    tool, interaction = by_name["claude_code.tool"], by_name["claude_code.interaction"]
    _, trace_id, parent_id, _ = header.split("-")
    assert wire["context"]["trace_id"] == execution["context"]["trace_id"] == trace_id
    assert wire["parent_id"] == execution["context"]["span_id"] == parent_id
    assert execution["parent_id"] == tool["context"]["span_id"]
    assert tool["parent_id"] == interaction["context"]["span_id"] and interaction["parent_id"] is None
    assert wire["attributes"]["gen_ai.tool.call.id"] == tool["attributes"]["gen_ai.tool.call.id"]
    assert any(s["name"] == "claude_code.llm_request" and s["context"]["trace_id"] == trace_id for s in spans)


def test_the_session_manifest_links_claude_codes_transcript(joined: Any) -> None:
    root, _, _ = joined
    manifest = json.loads((root / "session" / "manifest.json").read_text())
    transcript = Path(manifest["transcript"])
    assert transcript.parent.parent == root / "home" / ".claude" / "projects"
    assert transcript.suffix == ".jsonl" and os.path.exists(transcript)
