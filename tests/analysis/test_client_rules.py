"""Each client's rules apply to that client's sessions only: Claude Code's clamp for claude-code, the
Python SDK's for its 2025-11-25 tasks, none for an A2A agent or an unknown client."""

from __future__ import annotations

from typing import Any

import pytest
from support import paths
from support.report_schema import valid_report

from wiretap.analysis.client_rules import RULES, Behaviour, describe, poll_rule_for
from wiretap.analysis.report import Analysis, build_report

RECORDINGS = paths.RECORDINGS


def core_task_report(client: dict[str, str] | None) -> dict[str, Any]:
    """A 2025-11-25 task asking 100 ms, polled three times, from the named client."""
    params: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {}}
    if client is not None:
        params["clientInfo"] = client
    events = [
        {
            "t": 0.0,
            "kind": "message",
            "dir": "c2s",
            "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        },
        {
            "t": 0.01,
            "kind": "message",
            "dir": "s2c",
            "msg": {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            },
        },
        {
            "t": 0.1,
            "kind": "message",
            "dir": "c2s",
            "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "task": {}}},
        },
        {
            "t": 0.11,
            "kind": "message",
            "dir": "s2c",
            "msg": {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"task": {"taskId": "T", "status": "working", "pollInterval": 100}},
            },
        },
    ]
    for n, t in enumerate((0.2, 0.3, 0.4)):
        status = "completed" if n == 2 else "working"
        events += [
            {
                "t": t,
                "kind": "message",
                "dir": "c2s",
                "msg": {"jsonrpc": "2.0", "id": 3 + n, "method": "tasks/get", "params": {"taskId": "T"}},
            },
            {
                "t": t + 0.005,
                "kind": "message",
                "dir": "s2c",
                "msg": {
                    "jsonrpc": "2.0",
                    "id": 3 + n,
                    "result": {"taskId": "T", "status": status, "pollInterval": 100},
                },
            },
        ]
    analysis = Analysis()
    for event in events:
        analysis.feed(event)
    return valid_report(analysis.report({"name": "t", "transport": "stdio", "started": "x"}, "test", 0).to_dict())


def test_every_rule_names_a_source_and_the_version_it_was_seen_on() -> None:
    for row in RULES:
        assert row.source.startswith("https://") and row.since and row.rule, row


def test_claude_codes_clamp_applies_to_a_claude_code_session() -> None:
    report = core_task_report({"name": "claude-code", "version": "2.1.332"})
    (task,) = report["tasks"]
    assert (task["requested_poll_ms"], task["applied_poll_ms"]) == (100, 250)
    assert report["poll_rule"].startswith("Claude Code's rule (seen on 2.1.332): ")
    assert "250 ms–30 s" in report["poll_rule"]


def test_a_python_sdk_session_gets_the_sdks_rule_and_no_claude_code_rule() -> None:
    report = core_task_report({"name": "mcp", "version": "0.1.0"})
    (task,) = report["tasks"]
    assert (task["requested_poll_ms"], task["applied_poll_ms"]) == (100, 100)
    assert report["poll_rule"].startswith("MCP Python SDK's rule")
    assert "Claude Code" not in str(report)


def test_an_unknown_client_gets_no_known_rule_and_no_applied_interval() -> None:
    report = core_task_report({"name": "someone-else", "version": "9"})
    (task,) = report["tasks"]
    assert task["applied_poll_ms"] is None
    assert report["poll_rule"] == "No known poll rule for someone-else"
    assert "Claude Code" not in str(report)
    assert core_task_report(None)["poll_rule"] == "No known poll rule: the client is not named"


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("a2a-backoff", "A2A has no poll interval to ask for"),
        ("a2a-rejected-loop", "A2A has no poll interval to ask for"),
        ("demo", "No known poll rule"),
    ],
)
def test_an_a2a_or_demo_recording_prints_no_claude_code_rule(name: str, rule: str) -> None:
    report = build_report(RECORDINGS / f"{name}.jsonl").to_dict()
    assert report["poll_rule"].startswith(rule)
    assert "Claude Code" not in report["poll_rule"] + report["verdicts"]["poll_intervals"]["verdict"]


def test_a_claude_code_reproduction_of_an_older_version_names_the_version_the_rule_was_seen_on() -> None:
    report = build_report(RECORDINGS / "cc-ext-polling.jsonl").to_dict()
    assert report["poll_rule"].startswith("Claude Code's rule (seen on 2.1.332, this client is 2.1.310): ")


def test_the_task_design_tells_fastmcp_from_the_python_sdk_under_one_client_name() -> None:
    sdk, fastmcp = poll_rule_for("mcp", "mcp-2025-11-25"), poll_rule_for("mcp", "mcp-tasks-extension")
    assert sdk is not None and sdk.who == "MCP Python SDK" and sdk.applied_ms(500) == 500
    assert fastmcp is not None and fastmcp.who == "fastmcp"
    inspector = poll_rule_for("inspector-cli")
    assert inspector is not None and inspector.applied_ms(3000) == 3000 and inspector.applied_ms(1) == 10
    assert inspector.applied_ms(None) == 1000
    assert describe("codex-mcp-client", "0.171.0") == "No known poll rule for codex-mcp-client"
    assert {row.behaviour for row in RULES if row.client == "claude-code"} == set(Behaviour)
