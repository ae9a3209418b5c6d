"""Claude Code's plugin and agent servers, its modes and a managed config, read the way Claude Code reads them
(without running it: ``claude`` is not on PATH here, so plugins come from the settings files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wiretap.wrap.clients import claude_code
from wiretap.wrap.clients.claude_code import discover, launch


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir()
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(config), "TOKEN": "t0k"}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def market(tmp_path: Path, home: dict[str, str], **settings: object) -> Path:
    folder = tmp_path / "market"
    write(folder / ".claude-plugin" / "marketplace.json", {
        "name": "m",
        "plugins": [
            {"name": "a", "source": "./a"},
            {"name": "b", "source": "./b", "strict": False, "mcpServers": {"inline": {"command": "b-server"}}},
        ],
    })  # fmt: skip
    write(folder / "a" / ".claude-plugin" / "plugin.json", {
        "name": "a", "userConfig": {"key": {"type": "string", "sensitive": True}, "greeting": {"type": "string"}},
    })  # fmt: skip
    write(folder / "a" / ".mcp.json", {"mcpServers": {
        "s": {
            "command": "${CLAUDE_PLUGIN_ROOT}/run",
            "args": ["${CLAUDE_PLUGIN_DATA}", "${user_config.greeting}", "${TOKEN}"],
        },
        "secret": {"command": "x", "args": ["${user_config.key}"]},
    }})  # fmt: skip
    write(folder / "b" / "README", "no plugin.json: the marketplace entry is its manifest")
    write(Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json", {
        "extraKnownMarketplaces": {"m": {"source": {"source": "directory", "path": str(folder)}}},
        "enabledPlugins": {"a@m": True, "b@m": True},
        "pluginConfigs": {"a@m": {"options": {"greeting": "hi", "key": "not-read"}}},
        **settings,
    })  # fmt: skip
    return folder


def test_a_marketplace_plugins_servers_are_named_as_claude_code_names_them_with_its_variables_filled(
    tmp_path: Path, home: dict[str, str]
) -> None:
    folder = market(tmp_path, home)
    found = discover(["claude"], tmp_path, home)
    servers = {s.name: s for s in found.servers}
    assert list(servers) == ["plugin:a:s", "plugin:b:inline"]
    root, data = str(folder / "a"), str(Path(home["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "a-m")
    assert servers["plugin:a:s"].raw == {
        "command": f"{root}/run",
        "args": [data, "hi", "${TOKEN}"],  # Claude Code expands ${TOKEN} itself, from the generated config
        "env": {"CLAUDE_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_DATA": data},
    }
    assert servers["plugin:a:s"].entry["args"] == [data, "hi", "t0k"]
    assert servers["plugin:a:s"].scope == "plugin a@m"
    assert found.skipped == [
        "plugin:a:secret (plugin a@m): it uses the plugin option key, which wiretap cannot read (a secret, or "
        "not set); Claude Code still loads it, unrecorded"
    ]


def test_a_disabled_plugin_is_left_alone_and_project_settings_can_disable_it(
    tmp_path: Path, home: dict[str, str]
) -> None:
    market(tmp_path, home)
    write(tmp_path / ".claude" / "settings.json", {"enabledPlugins": {"a@m": False}})
    assert [s.name for s in discover(["claude"], tmp_path, home).servers] == ["plugin:b:inline"]
    assert discover(["claude", "--settings", '{"enabledPlugins": {"b@m": false}}'], tmp_path, home).servers == []


def test_plugin_dir_and_skills_dir_plugins_declare_servers_in_plugin_json_inline_or_in_a_file(
    tmp_path: Path, home: dict[str, str]
) -> None:
    config = Path(home["CLAUDE_CONFIG_DIR"])
    write(config / "skills" / "sk" / ".claude-plugin" / "plugin.json", {"name": "sk", "mcpServers": "./servers.json"})
    write(config / "skills" / "sk" / "servers.json", {"mcpServers": {"one": {"command": "one"}}})
    many = tmp_path / "plugins"
    write(many / "p" / ".claude-plugin" / "plugin.json", {"name": "p", "mcpServers": {"two": {"command": "two"}}})
    write(many / "q" / ".mcp.json", {"three": {"type": "http", "url": "http://127.0.0.1:1/mcp"}})
    found = discover(["claude", "--plugin-dir", str(many)], tmp_path, home)
    assert {s.name: s.scope for s in found.servers} == {
        "plugin:sk:one": "plugin sk@skills-dir",
        "plugin:p:two": "plugin p@inline",
        "plugin:q:three": "plugin q@inline",
    }
    assert next(s for s in found.servers if s.name == "plugin:q:three").raw == {
        "type": "http",
        "url": "http://127.0.0.1:1/mcp",
    }


AGENT = """---
name: helper
description: Helps.
tools: Read, Grep
mcpServers:
  - own: {command: own-server}
  - shared
---
You help.
"""


def trust(tmp_path: Path, home: dict[str, str]) -> None:
    write(
        Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json",
        {"projects": {str(tmp_path): {"hasTrustDialogAccepted": True}}},
    )


def test_a_file_agents_inline_server_is_wrapped_by_passing_the_agent_again_with_agents(
    tmp_path: Path, home: dict[str, str]
) -> None:
    write(tmp_path / ".claude" / "agents" / "helper.md", AGENT)
    trust(tmp_path, home)
    found = discover(["claude", "-p", "x"], tmp_path, home)
    assert [(s.name, s.scope) for s in found.servers] == [("agent:helper:own", "agent (file)")]
    started = launch(found, {"agent:helper:own": {"command": "tap", "args": ["own-server"]}})
    assert started.argv[:3] == ["claude", "--agents", started.argv[2]] and started.argv[3:] == ["-p", "x"]
    assert json.loads(started.argv[2]) == {
        "helper": {
            "description": "Helps.",
            "tools": ["Read", "Grep"],
            "mcpServers": [{"own": {"command": "tap", "args": ["own-server"]}}, "shared"],
            "prompt": "You help.",
        }
    }


def test_an_untrusted_projects_agent_and_strict_mode_leave_file_agents_alone(
    tmp_path: Path, home: dict[str, str]
) -> None:
    write(tmp_path / ".claude" / "agents" / "helper.md", AGENT)
    found = discover(["claude"], tmp_path, home)
    assert found.servers == []
    assert found.skipped == [
        f"agent helper ({tmp_path / '.claude' / 'agents' / 'helper.md'}): this folder is not trusted, so Claude "
        "Code starts none of its servers"
    ]
    trust(tmp_path, home)
    assert discover(["claude", "--strict-mcp-config"], tmp_path, home).servers == []


def test_agents_given_on_the_command_line_win_over_files_and_are_rewritten_in_place(
    tmp_path: Path, home: dict[str, str]
) -> None:
    write(tmp_path / ".claude" / "agents" / "helper.md", AGENT)
    trust(tmp_path, home)
    given = {"helper": {"description": "d", "prompt": "p", "mcpServers": [{"mine": {"command": "m"}}]}}
    found = discover(["claude", "--agents", json.dumps(given), "--strict-mcp-config"], tmp_path, home)
    assert [s.name for s in found.servers] == ["agent:helper:mine"]
    started = launch(found, {"agent:helper:mine": {"command": "tap"}})
    assert json.loads(started.argv[started.argv.index("--agents") + 1]) == {
        "helper": {"description": "d", "prompt": "p", "mcpServers": [{"mine": {"command": "tap"}}]}
    }
    assert "--strict-mcp-config" in started.argv


def test_a_command_line_server_wiretap_cannot_wrap_is_kept_in_the_generated_config(
    tmp_path: Path, home: dict[str, str]
) -> None:
    inline = json.dumps({"mcpServers": {"w": {"type": "ws", "url": "ws://x"}, "s": {"command": "s"}}})
    found = discover(["claude", "--mcp-config", inline], tmp_path, home)
    started = launch(found, {"s": {"command": "tap"}})
    try:
        assert started.argv[:2] == ["claude", "--mcp-config"] and "--strict-mcp-config" not in started.argv
        config = json.loads(Path(started.argv[2]).read_text())
        assert config == {"mcpServers": {"w": {"type": "ws", "url": "ws://x"}, "s": {"command": "tap"}}}
        assert Path(started.argv[2]).stat().st_mode & 0o777 == 0o600
    finally:
        started.cleanup()


def test_bare_mode_wraps_only_the_command_lines_servers(tmp_path: Path, home: dict[str, str]) -> None:
    market(tmp_path, home)
    write(Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json", {"mcpServers": {"user": {"command": "u"}}})
    inline = json.dumps({"mcpServers": {"s": {"command": "s"}}})
    assert [s.name for s in discover(["claude", "--bare", "--mcp-config", inline], tmp_path, home).servers] == ["s"]


def test_safe_mode_runs_the_command_as_given_and_says_no_server_was_wrapped(
    tmp_path: Path, home: dict[str, str]
) -> None:
    argv = ["claude", "--safe-mode", "--mcp-config", json.dumps({"mcpServers": {"s": {"command": "s"}}})]
    found = discover(argv, tmp_path, home)
    assert found.servers == [] and launch(found, {}).argv == argv
    assert found.skipped == ["every server: --safe-mode loads no MCP server (not even --mcp-config), so none to record"]


def test_a_managed_mcp_config_runs_the_command_as_given_and_says_why_nothing_was_wrapped(
    tmp_path: Path, home: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = write(tmp_path / "etc" / "claude-code" / "managed-mcp.json", {"mcpServers": {}})
    monkeypatch.setitem(claude_code.MANAGED_MCP, "linux", managed)
    monkeypatch.setitem(claude_code.MANAGED_MCP, "darwin", managed)
    write(Path(home["CLAUDE_CONFIG_DIR"]) / ".claude.json", {"mcpServers": {"user": {"command": "u"}}})
    found = discover(["claude", "-p", "x"], tmp_path, home)
    assert found.servers == [] and launch(found, {}).argv == ["claude", "-p", "x"]
    assert found.skipped == [
        f"every server: {managed} gives your organization control of MCP servers, and Claude Code then refuses "
        "--mcp-config; the session ran as without wiretap, unrecorded"
    ]


def test_claude_code_looks_for_managed_mcp_json_in_its_system_folders() -> None:
    assert str(claude_code.MANAGED_MCP["linux"]) == "/etc/claude-code/managed-mcp.json"
    assert str(claude_code.MANAGED_MCP["darwin"]) == "/Library/Application Support/ClaudeCode/managed-mcp.json"
