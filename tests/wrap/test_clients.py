"""Which MCP servers Claude Code would load, read the way Claude Code reads them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wiretap.wrap.clients import UnknownClient, client_for
from wiretap.wrap.clients.claude_code import ConfigError, discover, launch_argv, split_argv
from wiretap.wrap.clients.servers import expand
from wiretap.wrap.session import _tap_entry


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir()
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(config)}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_variables_expand_with_defaults_and_missing_ones_are_named() -> None:
    missing: set[str] = set()
    text = expand("${A}/${B:-fallback}/${C}", {"A": "a"}, missing)
    assert text == "a/fallback/${C}" and missing == {"C"}


def test_local_beats_project_beats_user_for_the_same_name(tmp_path: Path, home: dict[str, str]) -> None:
    project = tmp_path / "proj"
    config = Path(home["CLAUDE_CONFIG_DIR"])
    write(
        config / ".claude.json",
        {
            "mcpServers": {"x": {"command": "user-x"}, "u": {"command": "user-only"}},
            "projects": {str(project): {"mcpServers": {"x": {"command": "local-x"}}}},
        },
    )
    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "project-x"}, "p": {"command": "project-p"}}})
    write(config / "settings.json", {"enableAllProjectMcpServers": True})
    found = discover(["claude"], project, home)
    assert {s.name: (s.scope, s.entry["command"]) for s in found.servers} == {
        "x": ("local", "local-x"),
        "p": ("project", "project-p"),
        "u": ("user", "user-only"),
    }


def test_project_servers_the_user_never_approved_are_left_out_and_said(tmp_path: Path, home: dict[str, str]) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    write(tmp_path / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    found = discover(["claude"], tmp_path, home)
    assert [s.name for s in found.servers] == ["a"]
    assert found.skipped == ["b (project .mcp.json): not approved in Claude Code, so not loaded"]


def test_mcp_config_files_and_json_strings_are_read_and_strict_keeps_only_them(
    tmp_path: Path, home: dict[str, str]
) -> None:
    write(Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json", {"mcpServers": {"user": {"command": "u"}}})
    write(tmp_path / "extra.json", {"mcpServers": {"file": {"command": "f"}}})
    inline = json.dumps({"mcpServers": {"inline": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}})
    argv = ["claude", "-p", "hi", "--mcp-config", "extra.json", inline, "--strict-mcp-config", "--verbose"]
    found = discover(argv, tmp_path, home)
    assert [s.name for s in found.servers] == ["file", "inline"]
    assert [s.transport for s in found.servers] == ["stdio", "http"]
    assert found.client_argv == ["claude", "-p", "hi", "--verbose"]
    assert [s.name for s in discover([*argv[:-2], "--verbose"], tmp_path, home).servers] == ["file", "inline", "user"]


def test_a_bad_mcp_config_is_a_one_line_error(tmp_path: Path, home: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"not found: nope\.json"):
        discover(["claude", "--mcp-config", "nope.json"], tmp_path, home)
    with pytest.raises(ConfigError, match="not valid JSON"):
        discover(["claude", "--mcp-config", "{broken"], tmp_path, home)


def test_the_option_forms_are_split_from_the_rest() -> None:
    assert split_argv(["claude", "--mcp-config=a.json", "-p", "x"]) == (["claude", "-p", "x"], ["a.json"], False)


def test_the_client_starts_with_our_config_beside_its_own_and_strict_only_when_the_user_asked() -> None:
    assert launch_argv(["claude", "-p", "x"], Path("/tmp/c.json")) == [
        "claude",
        "--mcp-config",
        "/tmp/c.json",
        "-p",
        "x",
    ]
    assert launch_argv(["claude", "-p", "x"], Path("/tmp/c.json"), strict=True) == [
        "claude",
        "--mcp-config",
        "/tmp/c.json",
        "--strict-mcp-config",
        "-p",
        "x",
    ]


def test_a_stdio_server_is_run_through_the_tap_with_its_entry_as_configured(
    tmp_path: Path, home: dict[str, str]
) -> None:
    """Claude Code expands ${VAR} in the generated config itself: wiretap must hand on the entry unexpanded."""
    write(tmp_path / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"s": {"command": "srv", "args": ["--port", "${PORT:-7}"], "env": {"TOKEN": "${TOKEN}"}}}},
    )
    (server,) = discover(["claude"], tmp_path, {**home, "TOKEN": "t0k"}).servers
    entry = _tap_entry(server, tmp_path / "s.jsonl", [])
    assert entry["command"] == sys.executable
    assert entry["args"][-4:] == ["--", "srv", "--port", "${PORT:-7}"]
    assert entry["args"][:4] == ["-m", "wiretap", "tap", "--out"] and entry["env"] == {"TOKEN": "${TOKEN}"}
    assert server.entry["args"] == ["--port", "7"] and server.entry["env"] == {"TOKEN": "t0k"}


def test_an_unknown_client_gets_advice_instead_of_a_guess() -> None:
    with pytest.raises(UnknownClient, match="wiretap tap --"):
        client_for("cursor-agent")
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "--", "cursor-agent", "-p"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and "does not know where 'cursor-agent' keeps its MCP servers" in result.stderr
    assert "Traceback" not in result.stderr
