"""The real Claude Code (2.1.332, offline, its TUI in tmux, through ``wiretap -- claude``) calling a tool
that answers late, and the user pressing Esc while it runs: ``notifications/cancelled`` on the wire, and
the server's late answer an ``answer-after-give-up``."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support import paths
from support.claude import API_KEY, offline_env
from support.eventually import eventually
from support.taprun import settled_read_all
from support.wrapped_claude import PROMPT_MARK, Tmux, approve_project_servers, has_answer, wrapped

from wiretap.analysis.session_report import build_session_report

pytestmark = pytest.mark.slow

SERVER = [sys.executable, str(paths.SCENARIOS / "give_up_server.py")]
SECONDS = 6.0
"""How late the tool answers: long enough to press Esc while it runs."""


def in_recording(recording: Path, method: str) -> bool:
    return recording.exists() and f'"method":"{method}"' in recording.read_text().replace(" ", "")


def test_esc_during_a_slow_tool_cancels_it_and_the_late_answer_comes_after_the_give_up(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"slow": {"command": SERVER[0], "args": SERVER[1:]}}}))
    approve_project_servers(tmp_path)
    (tmp_path / "home" / ".claude" / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            }
        )
    )
    out = tmp_path / "session"
    recording = out / "slow.jsonl"
    script = [ToolUse("mcp__slow__slow", {"seconds": SECONDS})]
    command = wrapped([str(claude_code_bin), "--allowedTools", script[0].name], "--out", str(out))
    with FakeMessagesAPI(script) as api:
        env = {k: v for k, v in offline_env(tmp_path, api.url).items() if not k.startswith("TMUX")}
        (tmp_path / "tmp").mkdir()
        tmux = Tmux(tmp_path / "tmux.sock", env | {"TMPDIR": str(tmp_path / "tmp")})
        try:
            tmux(
                "new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-c", str(project), *command,
                ";", "set-option", "-t", "main", "remain-on-exit", "on",
                cwd=project,
            )  # fmt: skip
            tmux.wait_for(PROMPT_MARK)
            eventually(lambda: has_answer(recording, "tools/list"), "no tools/list answered", 60, tmux.screen)
            time.sleep(1.0)  # for Claude Code to take the tools in, and the screen to settle
            tmux("send-keys", "-t", "main", "-l", "Please call the slow tool")
            tmux.wait_for("Please call the slow tool", 15)
            tmux("send-keys", "-t", "main", "Enter")
            eventually(lambda: in_recording(recording, "tools/call"), "no tools/call", 60, tmux.screen)
            tmux("send-keys", "-t", "main", "Escape")
            eventually(lambda: in_recording(recording, "notifications/cancelled"), "no cancel", 15, tmux.screen)
            eventually(lambda: has_answer(recording, "tools/call"), "no late answer", SECONDS + 15, tmux.screen)
            tmux("send-keys", "-t", "main", "-l", "/exit")
            tmux.wait_for("/exit", 15)
            time.sleep(0.3)  # the command menu
            tmux("send-keys", "-t", "main", "Enter")
            manifest = out / "manifest.json"
            ended = lambda: manifest.exists() and json.loads(manifest.read_text()).get("running") is False  # noqa: E731
            eventually(ended, "wiretap did not end", 30, tmux.screen)
        finally:
            tmux.kill_everything()
    _, events, _ = settled_read_all(recording)
    messages = [e for e in events if e["kind"] == "message"]
    [call] = [e for e in messages if e["dir"] == "c2s" and e["msg"].get("method") == "tools/call"]
    [cancel] = [e for e in messages if e["dir"] == "c2s" and e["msg"].get("method") == "notifications/cancelled"]
    [answer] = [e for e in messages if e["dir"] == "s2c" and e["msg"].get("id") == call["msg"]["id"]]
    assert cancel["msg"]["params"]["requestId"] == call["msg"]["id"]
    report = build_session_report(out)
    found = [(f.code, f.times) for f in report.findings if f.code in ("client-gave-up", "answer-after-give-up")]
    offset = report.parts[0].recording.offset or 0.0
    want = [
        ("client-gave-up", [call["t"] + offset, cancel["t"] + offset]),
        ("answer-after-give-up", [call["t"] + offset, cancel["t"] + offset, answer["t"] + offset]),
    ]
    assert [code for code, _ in found] == [code for code, _ in want], found
    for (_, times), (_, truth) in zip(found, want, strict=True):
        assert all(abs(a - b) <= 0.020 for a, b in zip(times, truth, strict=True)), (times, truth)
