"""``wiretap import claude-code`` of a run of the real Claude Code 2.1.332 (offline, fake Messages API) that
wiretap also recorded: the imported tool calls against the recording of the same run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse
from support import paths
from support.claude import offline_env, stdio_server, write_mcp_config

pytestmark = pytest.mark.slow

Json = dict[str, Any]
SERVER = [sys.executable, str(paths.SCENARIOS / "stdio_server.py"), "mcp"]
WIRETAP = [sys.executable, "-m", "wiretap"]
TOLERANCE_NS = 50_000_000


def wall_ns(header: Json, event: Json) -> int:
    return int(header["wall_origin_ns"]) + round(float(event["t"]) * 1e9)


def lines(path: Path) -> list[Json]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def one_run(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Claude Code calling the scenario server's ``echo`` twice through ``wiretap --``, with ``--debug``; then
    ``wiretap import claude-code`` of the files it wrote, from its project folder. (recorded, imported)."""
    root = tmp_path_factory.mktemp("import-claude")
    project = root / "project"
    project.mkdir()
    script = [ToolUse("mcp__demo__echo", {"text": "one"}), ToolUse("mcp__demo__echo", {"text": "two"})]
    with FakeMessagesAPI(script) as api:
        env = offline_env(root, api.url) | {"XDG_CACHE_HOME": str(root / "cache")}
        config = write_mcp_config(root / "mcp.json", {"demo": stdio_server(SERVER[0], SERVER[1:])})
        claude = [
            str(claude_code_bin), "-p", "call echo twice", "--mcp-config", str(config), "--strict-mcp-config",
            "--allowedTools", "mcp__demo__echo", "--output-format", "stream-json", "--verbose", "--debug",
        ]  # fmt: skip
        ran = subprocess.run(
            [*WIRETAP, "--out", str(root / "recorded"), "--", *claude],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    imported = subprocess.run(
        [*WIRETAP, "import", "claude-code", "--out", str(root / "imported")],
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    return root / "recorded" / "demo.jsonl", root / "imported" / "demo.jsonl"


def test_the_imported_tool_calls_are_the_recorded_ones_in_name_order_and_tool_use_id(
    one_run: tuple[Path, Path],
) -> None:
    recorded, imported = map(lines, one_run)
    calls = [e["msg"] for e in recorded if e["kind"] == "message" and e["msg"].get("method") == "tools/call"]
    wanted = [
        (m["params"]["name"], m["params"]["_meta"]["claudecode/toolUseId"], m["params"]["arguments"]) for m in calls
    ]
    got = [(e["tool"], e["tool_use_id"], e["input"]) for e in imported if e.get("what") == "tool_call"]
    assert got == wanted
    assert [name for name, _, _ in got] == ["echo", "echo"]


def test_the_imported_call_times_are_within_50_ms_of_the_recorded_ones(one_run: tuple[Path, Path]) -> None:
    recorded, imported = map(lines, one_run)
    requests = {
        e["msg"]["id"]: e for e in recorded if e["kind"] == "message" and e["msg"].get("method") == "tools/call"
    }
    answers = [e for e in recorded if e["kind"] == "message" and e["dir"] == "s2c" and e["msg"].get("id") in requests]
    sent = [wall_ns(recorded[0], e) for e in requests.values()]
    answered = [wall_ns(recorded[0], e) for e in answers]
    started = [wall_ns(imported[0], e) for e in imported if e.get("what") == "tool_call"]
    ended = [wall_ns(imported[0], e) for e in imported if e.get("what") == "tool_result"]
    assert len(started) == len(sent) == 2
    assert [abs(a - b) <= TOLERANCE_NS for a, b in zip(started, sent, strict=True)] == [True, True]
    assert [abs(a - b) <= TOLERANCE_NS for a, b in zip(ended, answered, strict=True)] == [True, True]


def test_the_import_invents_no_json_rpc_id_or_method(one_run: tuple[Path, Path]) -> None:
    _, imported = map(lines, one_run)
    assert {e["kind"] for e in imported} == {"header", "observed", "end"}
    assert [e for e in imported if {"id", "method", "msg", "size"} & set(e)] == []


def test_the_import_has_the_connection_version_outcomes_and_shutdown(one_run: tuple[Path, Path]) -> None:
    _, imported = map(lines, one_run)
    whats = [e["what"] for e in imported if e["kind"] == "observed" and e["what"] != "log"]
    signals = [e["signal"] for e in imported if e.get("what") == "signal_sent"]
    # Claude Code follows its SIGINT with a SIGTERM when the server is slow to exit (a loaded machine).
    assert signals in (["SIGINT"], ["SIGINT", "SIGTERM"])
    assert whats == [
        "connecting", "connected", "capabilities", "tool_call", "tool_result", "tool_call", "tool_result",
        *["signal_sent"] * len(signals), "closed", "exited",
    ]  # fmt: skip
    capabilities = next(e for e in imported if e.get("what") == "capabilities")
    assert capabilities["protocol_version"] == "2025-11-25"
    assert [e["outcome"] for e in imported if e.get("what") == "tool_result"] == ["ok", "ok"]
    assert next(e["signal"] for e in imported if e.get("what") == "signal_sent") == "SIGINT"
