"""``wiretap --otlp -- claude``: a real Claude Code session (offline, fake Messages API) sent live as one trace."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import ToolUse
from support.otlp_receiver import otlp_receiver
from support.wrapped_claude import PRINT_MODE, run_claude_code, wrapped

from wiretap.otel.sources import session_spans
from wiretap.recording.folders import open_session

pytestmark = pytest.mark.slow
DEMO = {"command": sys.executable, "args": ["-m", "wiretap.demo.server"]}
SCRIPT = [ToolUse("mcp__demo__echo", {"text": "traced"})]


def test_a_claude_code_session_arrives_as_one_trace_of_its_recordings(claude_code_bin: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    inline = json.dumps({"mcpServers": {"demo": DEMO}})
    argv = [
        str(claude_code_bin), "-p", "Call the echo tool.", "--mcp-config", inline, "--strict-mcp-config",
        "--allowedTools", "mcp__demo__echo", *PRINT_MODE,
    ]  # fmt: skip
    out = tmp_path / "session"
    with otlp_receiver() as receiver:
        run = run_claude_code(
            wrapped(argv, "--otlp-endpoint", receiver.url, "--out", str(out)), root=tmp_path, cwd=project, script=SCRIPT
        )
        assert run.claude.returncode == 0, run.claude.describe()
        expected = session_spans(open_session(out))
        deadline = time.monotonic() + 60  # the follower flushes after wiretap has exited
        while len(wire_spans(receiver.spans)) < len(expected) and time.monotonic() < deadline:
            time.sleep(0.1)
    ours = wire_spans(receiver.spans)
    assert sorted((s.span_id, s.name) for s in ours) == sorted((s.span_id, s.name) for s in expected)
    assert len({s.trace_id for s in ours}) == 1
    # --otlp also turns on Claude Code's own tracing towards the same endpoint.
    assert any(s.name.startswith("claude_code.") for s in receiver.spans)
    (root,) = [s for s in ours if not s.parent_span_id]
    assert root.name == "wiretap session Claude Code"
    (call,) = [s for s in receiver.spans if s.name == "tools/call echo"]
    attributes = {a.key: a.value.string_value for a in call.attributes}
    assert attributes["gen_ai.tool.name"] == "echo" and attributes["network.transport"] == "pipe"
    assert run.claude.stderr.count("wiretap: otlp") == 0


def wire_spans(spans: list[Any]) -> list[Any]:
    return [s for s in spans if not s.name.startswith("claude_code.")]
