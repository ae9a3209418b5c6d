"""``wiretap compare``: clients side by side, and the client's identity in sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import paths
from support.profile_runs import Events, http_run, session, stdio_run, wiretap, write

from wiretap.analysis.identity import client_identity

GEMINI = {"name": "gemini-cli-mcp-client", "version": "0.61.0"}


def gemini_like() -> Events:
    """Keys in Gemini's order, roots only, elicitation refused, roots/list answered, SIGTERM then stdin."""

    def line(t: float, direction: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"t": t, "kind": "message", "dir": direction, "msg": body}

    params = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}}, "clientInfo": GEMINI}
    return [
        line(0.01, "c2s", {"method": "initialize", "params": params, "jsonrpc": "2.0", "id": 0}),
        line(0.02, "s2c", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}}),
        line(0.03, "s2c", {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}),
        line(0.04, "c2s", {"result": {"roots": [{"uri": "file:///p"}]}, "jsonrpc": "2.0", "id": 1}),
        line(0.05, "s2c", {"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {}}),
        line(0.06, "c2s", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}}),
        {"t": 1.0, "kind": "signal", "signal": "SIGTERM", "signum": 15, "forwarded": True},
        {"t": 1.017, "kind": "eof", "dir": "c2s"},
        {"t": 1.02, "kind": "exit", "status": 143, "signal": "SIGTERM", "signum": 15},
        {"t": 1.03, "kind": "end", "written": 9, "lost": 0},
    ]


def test_compare_puts_each_client_in_a_column_and_each_behaviour_in_a_row(tmp_path: Path) -> None:
    claude = session(tmp_path / "claude", {"scenario": stdio_run()})
    gemini = session(tmp_path / "gemini", {"scenario": gemini_like()}, exited=1.001)
    codex = tmp_path / "codex.jsonl"
    write(codex, http_run(("tools/list",)), transport="http")
    result = wiretap("compare", "--format", "json", str(claude), str(gemini), str(codex))
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)
    assert [c["client"] for c in table["clients"]] == [
        "claude-code 2.1.197",
        "gemini-cli-mcp-client 0.61.0",
        "codex 0.171.0",
    ]
    rows = {row["behaviour"]: row["values"] for row in table["rows"]}
    assert rows["protocol version"] == ["2025-11-25", "2025-06-18", "2025-06-18"]
    assert rows["declared capabilities"][:2] == ['{"elicitation":{},"roots":{}}', '{"roots":{"listChanged":true}}']
    assert rows["key order"] == ["jsonrpc,id,method,params", "method,params,jsonrpc,id", "jsonrpc,id,method,params"]
    assert rows["answers elicitation"] == ["—", "error -32601", "—"]
    assert rows["answers roots/list"] == ["—", "result: 1 root(s)", "—"]
    assert rows["shutdown of a stdio server"] == [
        "SIGINT +0 ms, server killed by SIGINT +5 ms",
        "SIGTERM +0 ms, stdin closed +17 ms, server killed by SIGTERM +20 ms",
        "—",
    ]
    assert rows["server orphaned"] == ["no", "yes", "—"]
    assert rows["HTTP: DELETE on exit"] == ["—", "—", "yes"]
    assert rows["HTTP: mcp-protocol-version header"] == ["—", "—", "2025-06-18"]


def test_compare_renders_a_markdown_table_and_a_text_table(tmp_path: Path) -> None:
    a, b = write(tmp_path / "a.jsonl", stdio_run()), write(tmp_path / "b.jsonl", gemini_like())
    markdown = wiretap("compare", "-f", "markdown", str(a), str(b)).stdout.splitlines()
    assert markdown[:2] == ["| behaviour | claude-code 2.1.197 | gemini-cli-mcp-client 0.61.0 |", "|---|---|---|"]
    assert "| answers elicitation | — | error -32601 |" in markdown
    text = wiretap("compare", str(a), str(b)).stdout
    assert "gemini-cli-mcp-client 0.61.0" in text and "error -32601" in text


def test_compare_of_a_missing_recording_is_exit_status_3_naming_it(tmp_path: Path) -> None:
    result = wiretap("compare", str(write(tmp_path / "a.jsonl", stdio_run())), str(tmp_path / "nope"))
    assert result.returncode == 3 and result.stderr == f"Error: {tmp_path / 'nope'}: No such file or directory\n"


def test_the_clients_identity_comes_from_its_handshake_and_sessions_shows_it(tmp_path: Path) -> None:
    assert client_identity(write(tmp_path / "g.jsonl", gemini_like())) == GEMINI
    assert client_identity(write(tmp_path / "none.jsonl", [])) is None
    folder = session(tmp_path / "sessions" / "s1", {"scenario": gemini_like()})
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest |= {"client_info": GEMINI, "exit": {"code": 0}, "client_argv": ["gemini", "-p", "hi"]}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    listed = wiretap("sessions", "--in", str(tmp_path / "sessions")).stdout
    assert "  gemini-cli-mcp-client 0.61.0  gemini -p hi  [exit 0]" in listed


def test_the_shipped_client_comparison_is_what_compare_says_of_the_shipped_sessions() -> None:
    clients = paths.RECORDINGS / "clients"
    result = wiretap("compare", "-f", "markdown", *(str(clients / name) for name in ("claude-code", "codex", "gemini")))
    assert result.returncode == 0, result.stderr
    assert result.stdout in (clients / "README.md").read_text()
    assert "| answers elicitation | result: cancel | result: decline | error -32601 |" in result.stdout
