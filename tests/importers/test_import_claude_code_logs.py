"""``wiretap import claude-code`` on excerpts of files the real Claude Code 2.1.332 wrote offline
(tests/corpora/claude_code_logs/): its per-server MCP logs, its ``--debug`` log and its transcript.

One run called the scenario server's ``echo`` twice (with ``--debug``); the other called a tool whose
result has ``isError`` (carrying a fake API key) and one answered with a JSON-RPC error (no ``--debug``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from support import paths

from wiretap.cli import cli
from wiretap.importers import claude_code_files
from wiretap.importers.claude_code_logs import (
    Dispatch,
    LogLine,
    ToolResult,
    ToolUse,
    fact,
    parse_debug_line,
    parse_duration,
    parse_mcp_log_line,
    parse_transcript_line,
)
from wiretap.schemas import schema_text

CORPUS = paths.CORPORA / "claude_code_logs"
ECHO_SESSION = "b152af11-e2f7-46a2-86e4-fac0738f19d6"
FAILURES_SESSION = "f0034be5-c1d2-4c8d-b71d-271783e13629"
FAKE_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
Json = dict[str, Any]


def lines_of(name: str) -> list[str]:
    return (CORPUS / name).read_text().splitlines()


def test_an_mcp_log_line_gives_its_time_server_text_session_and_cwd() -> None:
    line = parse_mcp_log_line(lines_of("mcp-logs-echo-twice.jsonl")[1], "demo")
    assert line == LogLine(
        1796296972617000000, "demo", "Successfully connected (transport: stdio) in 119ms", "debug",
        ECHO_SESSION, "/tmp/demo/one",
    )  # fmt: skip


def test_an_mcp_log_error_line_is_read_as_an_error() -> None:
    line = parse_mcp_log_line(lines_of("mcp-logs-failures.jsonl")[4], "demo")
    assert line is not None
    assert (line.level, line.text) == ("error", "it broke: api_key=[REDACTED]")


def test_a_line_that_is_not_an_mcp_log_line_gives_nothing() -> None:
    assert parse_mcp_log_line("not json", "demo") is None
    assert parse_mcp_log_line('{"debug": "no timestamp"}', "demo") is None


def test_the_connection_lines_become_facts_with_what_they_name() -> None:
    texts = [json.loads(raw)["debug"] for raw in lines_of("mcp-logs-echo-twice.jsonl")[:3]]
    assert fact(texts[0]) == {"what": "connecting", "timeout_ms": 30000}
    assert fact(texts[1]) == {
        "what": "connected", "transport": "stdio",
        "logged_duration": "119ms", "logged_seconds": 0.119, "logged_resolution": 0.001,
    }  # fmt: skip
    capabilities = fact(texts[2])
    assert (capabilities["what"], capabilities["protocol_version"], capabilities["era"]) == (
        "capabilities", "2025-11-25", "legacy",
    )  # fmt: skip
    assert capabilities["server_info"] == {"name": "wiretap-stdio-scenario", "version": "1.0.0"}


def test_tool_call_and_outcome_lines_become_facts() -> None:
    assert fact("Calling MCP tool: echo") == {"what": "tool_call", "tool": "echo"}
    assert fact("Tool 'echo' completed successfully in 6ms") == {
        "what": "tool_result", "tool": "echo", "outcome": "ok",
        "logged_duration": "6ms", "logged_seconds": 0.006, "logged_resolution": 0.001,
    }  # fmt: skip
    assert fact("Tool 'boom' failed after 0s: boom went the server") == {
        "what": "tool_result", "tool": "boom", "outcome": "error",
        "logged_duration": "0s", "logged_seconds": 0, "logged_resolution": 1.0, "error": "boom went the server",
    }  # fmt: skip


def test_shutdown_lines_become_facts_and_any_other_line_a_log_fact() -> None:
    assert fact("Sending SIGINT to MCP server process") == {"what": "signal_sent", "signal": "SIGINT"}
    assert fact("MCP server process exited cleanly") == {"what": "exited", "how": "cleanly"}
    assert fact("Cleared connection cache for reconnection") == {"what": "log"}


def test_claude_codes_durations_are_read_with_their_resolution() -> None:
    assert parse_duration("6ms") == (0.006, 0.001)
    assert parse_duration("3s") == (3, 1.0)
    assert parse_duration("2m 5s") == (125, 1.0)
    assert parse_duration("soon") is None


def test_debug_lines_give_server_lines_and_tool_dispatches() -> None:
    parsed = [parse_debug_line(raw) for raw in lines_of("debug-echo-twice.txt")]
    assert parsed[0] == LogLine(1796296972511000000, "demo", "Starting connection with timeout of 30000ms", "debug")
    assert parsed[3] is None  # "[MCP] Server "demo" connected …": not an MCP server line
    assert parsed[4] == Dispatch(
        1796296972703000000, "start", "toolu_fake_step00", {"tool": "mcp_tool", "permissionDecisionMs": "4"}
    )
    assert parsed[7] == Dispatch(
        1796296972712000000, "end", "toolu_fake_step00", {"tool": "mcp_tool", "outcome": "ok", "durationMs": "9"}
    )


def test_transcript_lines_give_tool_uses_and_results() -> None:
    use_line, result_line = lines_of("transcript-failures.jsonl")[:2]
    assert parse_transcript_line(use_line)[0] == [
        ToolUse(1796297142953000000, "toolu_fake_step00", "mcp__demo__fail", {})
    ]
    uses, results, where = parse_transcript_line(result_line)
    assert uses == []
    assert results == [ToolResult(1796297142976000000, "toolu_fake_step00", f"it broke: api_key={FAKE_KEY}", True)]
    assert where == {"sessionId": FAILURES_SESSION, "cwd": "/tmp/demo/two"}


def claude_files(root: Path, run: str, session: str, cwd: str, *, debug: bool) -> dict[str, str]:
    """The excerpts laid out where Claude Code keeps them; the environment that points there."""
    cache = root / "cache" / "claude-cli-nodejs" / claude_code_files.slug(cwd) / "mcp-logs-demo"
    cache.mkdir(parents=True)
    shutil.copy(CORPUS / f"mcp-logs-{run}.jsonl", cache / "2026-12-03T11-22-52-511Z.jsonl")
    config = root / "config"
    projects = config / "projects" / claude_code_files.slug(cwd)
    projects.mkdir(parents=True)
    shutil.copy(CORPUS / f"transcript-{run}.jsonl", projects / f"{session}.jsonl")
    if debug:
        (config / "debug").mkdir()
        shutil.copy(CORPUS / f"debug-{run}.txt", config / "debug" / f"{session}.txt")
    return {"HOME": str(root), "XDG_CACHE_HOME": str(root / "cache"), "CLAUDE_CONFIG_DIR": str(config)}


def run_import(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import", "claude-code", *args], env=env)
    return result.exit_code, result.output


def events_of(recording: Path) -> list[Json]:
    return [json.loads(line) for line in recording.read_text().splitlines()]


def test_an_imported_session_holds_each_tool_call_with_its_id_input_and_duration(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, "/tmp/demo/one", debug=True)
    cache = Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-one"
    status, output = run_import(env, str(cache), "--out", str(tmp_path / "imported"))
    assert status == 0, output
    events = events_of(tmp_path / "imported" / "demo.jsonl")
    calls = [(e["t"], e["tool"], e["tool_use_id"], e["input"]) for e in events if e.get("what") == "tool_call"]
    assert calls == [
        (0.194, "echo", "toolu_fake_step00", {"text": "one"}),
        (0.264, "echo", "toolu_fake_step01", {"text": "two"}),
    ]
    results = [(e["t"], e["outcome"], e["duration"], e["result"]) for e in events if e.get("what") == "tool_result"]
    assert results == [
        (0.2, "ok", 0.006, [{"type": "text", "text": "one"}]),
        (0.266, "ok", 0.002, [{"type": "text", "text": "two"}]),
    ]
    assert events[0]["wall_origin_ns"] == 1796296972511000000
    assert (events[0]["imported"], events[0]["imported_from"]) == (True, "claude-code")


def test_an_imported_recording_holds_no_message_id_or_method(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, "/tmp/demo/one", debug=True)
    run_import(
        env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-one"), "--out", str(tmp_path / "i")
    )
    events = events_of(tmp_path / "i" / "demo.jsonl")
    assert {e["kind"] for e in events} == {"header", "observed", "end"}
    assert [e for e in events if "id" in e or "method" in e or "msg" in e] == []
    assert "jsonrpc_ids" in events[0]["unknown"]


def test_every_imported_line_matches_the_recording_schema(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "failures", FAILURES_SESSION, "/tmp/demo/two", debug=False)
    run_import(
        env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-two"), "--out", str(tmp_path / "i")
    )
    validator = jsonschema.Draft202012Validator(json.loads(schema_text("recording")))
    errors = [e.message for event in events_of(tmp_path / "i" / "demo.jsonl") for e in validator.iter_errors(event)]
    assert errors == []


def test_failed_calls_keep_their_error_and_the_transcripts_secret_is_redacted(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "failures", FAILURES_SESSION, "/tmp/demo/two", debug=False)
    run_import(
        env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-two"), "--out", str(tmp_path / "i")
    )
    text = (tmp_path / "i" / "demo.jsonl").read_text()
    outcomes = [(e["tool"], e["tool_use_id"], e["outcome"], e["error"]) for e in map(json.loads, text.splitlines())
                if e.get("what") == "tool_result"]  # fmt: skip
    assert [o[:3] for o in outcomes] == [("fail", "toolu_fake_step00", "error"), ("boom", "toolu_fake_step01", "error")]
    assert re.fullmatch(r"it broke: api_key=\[redacted:[0-9a-f]{4}\]", outcomes[0][3])
    assert outcomes[1][3] == "boom went the server"
    assert FAKE_KEY not in text


def test_without_a_path_the_import_finds_the_files_for_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, str(project), debug=True)
    monkeypatch.chdir(project)
    status, output = run_import(env, "--out", str(tmp_path / "i"))
    assert status == 0, output
    manifest = json.loads((tmp_path / "i" / "manifest.json").read_text())
    assert manifest["imported"]["session_id"] == ECHO_SESSION
    assert [Path(f).name for f in manifest["imported"]["files"]] == [
        "2026-12-03T11-22-52-511Z.jsonl", f"{ECHO_SESSION}.txt", f"{ECHO_SESSION}.jsonl",
    ]  # fmt: skip


def test_show_reads_an_imported_session_as_rows_of_logged_facts(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, "/tmp/demo/one", debug=True)
    run_import(
        env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-one"), "--out", str(tmp_path / "i")
    )
    shown = CliRunner().invoke(cli, ["show", str(tmp_path / "i"), "--no-color"]).output.splitlines()
    assert [line.split(None, 3)[3] for line in shown[3:7]] == [
        'log: tool call             echo {"text": "one"} [toolu_fake_step00]',
        "log: tool result           echo ok 6 ms one [toolu_fake_step00]",
        'log: tool call             echo {"text": "two"} [toolu_fake_step01]',
        "log: tool result           echo ok 2 ms two [toolu_fake_step01]",
    ]


def test_the_report_of_an_imported_session_says_what_its_logs_cannot_tell(tmp_path: Path) -> None:
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, "/tmp/demo/one", debug=True)
    run_import(
        env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-one"), "--out", str(tmp_path / "i")
    )
    whole = json.loads(CliRunner().invoke(cli, ["report", str(tmp_path / "i"), "-f", "json"]).output)
    assert [part["recording"]["imported"] for part in whole["reports"]] == ["claude-code"]
    report = whole["report"]
    verdicts = report["verdicts"]
    assert verdicts["poll_intervals"]["verdict"] == (
        "Not known: imported from Claude Code's logs, which hold no JSON-RPC messages: poll intervals are not known."
    )
    assert verdicts["shutdown"]["order"] == [
        "Sending SIGINT to MCP server process", "STDIO connection closed after 0s (cleanly)",
        "MCP server process exited cleanly",
    ]  # fmt: skip
    assert report["findings"] == []


def test_a_folder_without_claude_code_logs_is_a_one_line_usage_error(tmp_path: Path) -> None:
    status, output = run_import({"HOME": str(tmp_path)}, str(tmp_path))
    assert (status, output) == (
        2,
        f"Error: {tmp_path}: no Claude Code MCP logs here (mcp-logs-<server>/<time>.jsonl)\n",
    )


def test_a_path_that_does_not_exist_is_a_one_line_unreadable_error(tmp_path: Path) -> None:
    status, output = run_import({"HOME": str(tmp_path)}, str(tmp_path / "gone"))
    assert (status, output) == (3, f"Error: {tmp_path / 'gone'}: no such file or folder\n")


def test_an_unreadable_log_is_a_one_line_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = claude_files(tmp_path, "echo-twice", ECHO_SESSION, "/tmp/demo/one", debug=True)
    debug = Path(env["CLAUDE_CONFIG_DIR"]) / "debug" / f"{ECHO_SESSION}.txt"
    read_text = Path.read_text

    def refuse(self: Path, *args: Any, **kwargs: Any) -> str:
        if self == debug:
            raise PermissionError(13, "Permission denied", str(self))
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refuse)
    status, output = run_import(env, str(Path(env["XDG_CACHE_HOME"]) / "claude-cli-nodejs" / "-tmp-demo-one"))
    assert (status, output) == (3, f"Error: {debug}: Permission denied\n")


def test_claude_codes_cache_folder_is_where_each_platform_keeps_it() -> None:
    env = {"HOME": "/h", "XDG_CACHE_HOME": "/x", "LOCALAPPDATA": "/l"}
    assert claude_code_files.cache_root(env, "linux") == Path("/x/claude-cli-nodejs")
    assert claude_code_files.cache_root({"HOME": "/h"}, "linux") == Path("/h/.cache/claude-cli-nodejs")
    assert claude_code_files.cache_root(env, "darwin") == Path("/h/Library/Caches/claude-cli-nodejs")
    assert claude_code_files.cache_root(env, "win32") == Path("/l/claude-cli-nodejs/Cache")
    assert claude_code_files.slug("/tmp/my project.v2") == "-tmp-my-project-v2"
