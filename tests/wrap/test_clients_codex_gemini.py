"""Where Codex and Gemini CLI keep their MCP servers, and how wiretap starts them with the servers wrapped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wiretap.wrap.clients import codex, gemini
from wiretap.wrap.clients.servers import ConfigError

TAP = {"command": "/py", "args": ["-m", "wiretap", "tap", "--", "srv"]}


def test_codex_finds_servers_in_config_toml_and_in_overrides_and_leaves_disabled_ones(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[mcp_servers.files]\ncommand = "srv"\nargs = ["-v"]\nenv = {A = "1"}\n'
        '[mcp_servers.off]\ncommand = "x"\nenabled = false\n'
        '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    argv = ["codex", "-c", 'mcp_servers.extra.command="e"', "exec", '--config=mcp_servers.files.args=["-q"]', "hi"]
    found = codex.discover(argv, tmp_path, {"CODEX_HOME": str(tmp_path)})
    servers = {s.name: s for s in found.servers}
    assert set(servers) == {"files", "web", "extra"}
    assert servers["files"].entry == {"command": "srv", "args": ["-q"], "env": {"A": "1"}, "type": "stdio"}
    assert servers["web"].transport == "http" and servers["extra"].scope == "-c"
    assert found.skipped == ["off (config.toml): disabled in Codex, so not started", codex.BUILT_IN]


def test_codex_gets_overrides_replacing_each_server_and_loses_the_users_overrides_of_the_same_keys(
    tmp_path: Path,
) -> None:
    argv = ["codex", "-c", 'mcp_servers.files.command="srv"', "-c", "model=o", "exec", "hi"]
    found = codex.discover(argv, tmp_path, {"CODEX_HOME": str(tmp_path)})
    launch = codex.launch(found, {"files": TAP, "web": {"url": "http://127.0.0.1:5/mcp"}})
    assert launch.argv == [
        "codex",
        "-c", 'mcp_servers.files.command="/py"',
        "-c", 'mcp_servers.files.args=["-m", "wiretap", "tap", "--", "srv"]',
        "-c", 'mcp_servers.web.url="http://127.0.0.1:5/mcp"',
        "-c", "model=o", "exec", "hi",
    ]  # fmt: skip
    assert launch.env == {} and launch.private == []


def test_a_broken_codex_config_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[mcp_servers\n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        codex.discover(["codex"], tmp_path, {"CODEX_HOME": str(tmp_path)})


def _gemini_home(tmp_path: Path, settings: dict[str, object]) -> dict[str, str]:
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    (tmp_path / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return {"HOME": str(tmp_path / "home"), "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(tmp_path / "none.json")}


def test_gemini_wraps_user_servers_and_names_why_it_leaves_others(tmp_path: Path) -> None:
    env = _gemini_home(
        tmp_path,
        {
            "mcpServers": {
                "files": {"command": "srv", "args": ["${ROOT}"]},
                "web": {"httpUrl": "http://127.0.0.1:9/mcp"},
                "shadowed": {"command": "user"},
                "excluded": {"command": "x"},
            },
            "mcp": {"excluded": ["excluded"]},
        },
    )
    project = tmp_path / "project"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"shadowed": {"command": "p"}}}))
    found = gemini.discover(["gemini", "-p", "x"], project, {**env, "ROOT": "/r", "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert {s.name: s.transport for s in found.servers} == {"files": "stdio", "web": "http"}
    assert next(s for s in found.servers if s.name == "files").entry["args"] == ["/r"]
    assert [line.split(":")[0] for line in found.skipped] == ["shadowed (workspace)", "excluded (user)"]
    only = gemini.discover(["gemini", "--allowed-mcp-server-names", "web"], project, env)
    assert [s.name for s in only.servers] == ["web"]


def test_gemini_gets_a_private_home_mirroring_the_users_and_the_users_files_survive_its_removal(
    tmp_path: Path,
) -> None:
    env = _gemini_home(tmp_path, {"ui": {"theme": "x"}, "mcpServers": {"files": {"command": "srv", "trust": True}}})
    user = tmp_path / "home" / ".gemini"
    (user / "history").mkdir()
    (user / "history" / "h.txt").write_text("mine")
    (user / "oauth_creds.json").write_text("{}")
    before = {p: p.read_bytes() for p in user.rglob("*") if p.is_file()}
    found = gemini.discover(["gemini"], tmp_path, env)
    launch = gemini.launch(
        found, {"files": {"type": "stdio", "trust": True, **TAP}, "web": {"url": "http://u", "httpUrl": "h"}}
    )
    home = Path(launch.env["GEMINI_CLI_HOME"])
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["ui"] == {"theme": "x"}
    assert settings["mcpServers"]["files"] == {"trust": True, **TAP}
    assert settings["mcpServers"]["web"] == {"httpUrl": "http://u"}
    assert (home / ".gemini" / "history").resolve() == (user / "history").resolve()
    assert oct(os.stat(home).st_mode & 0o777) == "0o700"
    launch.cleanup()
    assert not home.exists()
    assert {p: p.read_bytes() for p in user.rglob("*") if p.is_file()} == before


def test_gemini_in_the_home_folder_is_refused_with_the_reason(tmp_path: Path) -> None:
    env = _gemini_home(tmp_path, {"mcpServers": {"files": {"command": "srv"}}})
    with pytest.raises(ConfigError, match="home folder"):
        gemini.discover(["gemini"], tmp_path / "home", env)


def test_codex_layers_system_user_trusted_project_profile_and_overrides_table_by_table(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub" / ".codex").mkdir(parents=True)
    (repo / ".codex").mkdir()
    home.mkdir()
    (home / "config.toml").write_text(
        f'[projects."{repo}"]\ntrust_level = "trusted"\n[mcp_servers.a]\ncommand = "user"\nenv = {{U = "1"}}\n'
    )
    (repo / ".codex" / "config.toml").write_text('[mcp_servers.a]\nargs = ["root"]\n[mcp_servers.b]\ncommand = "b"\n')
    (repo / "sub" / ".codex" / "config.toml").write_text('[mcp_servers.b]\ncommand = "closest"\n')
    (home / "work.config.toml").write_text('[mcp_servers.c]\nurl = "http://127.0.0.1:9/mcp"\n')
    argv = ["codex", "exec", "--profile", "work", "-c", 'mcp_servers.c.url="http://127.0.0.1:8/mcp"', "hi"]
    found = codex.discover(argv, repo / "sub", {"CODEX_HOME": str(home)})
    servers = {s.name: (s.scope, s.entry) for s in found.servers}
    user_and_root = {"command": "user", "env": {"U": "1"}, "args": ["root"], "type": "stdio"}
    assert servers == {
        "a": (f"project {repo}/.codex/config.toml", user_and_root),
        "b": (f"project {repo}/sub/.codex/config.toml", {"command": "closest", "type": "stdio"}),
        "c": ("profile work", {"url": "http://127.0.0.1:8/mcp", "type": "http"}),
    }


def test_codex_skips_an_untrusted_projects_config_and_marks_an_oauth_server_forward_only(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".codex").mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text('[mcp_servers.login]\nurl = "https://x.example/mcp"\nscopes = ["read"]\n')
    (repo / ".codex" / "config.toml").write_text('[mcp_servers.p]\ncommand = "p"\n')
    found = codex.discover(["codex", "exec", "hi"], repo, {"CODEX_HOME": str(home)})
    [login] = found.servers
    assert (
        login.name == "login" and login.forward_only == "it logs in with OAuth, and Codex keeps the login for its URL"
    )
    assert [line for line in found.skipped if line.startswith("p ")] == [], "an untrusted project is not read"


def test_gemini_combines_each_scopes_allowed_and_excluded_as_gemini_does(tmp_path: Path) -> None:
    servers = {n: {"command": n} for n in ("a", "b", "c")}
    env = _gemini_home(tmp_path, {"mcpServers": servers, "mcp": {"allowed": ["a", "b"], "excluded": ["b"]}})
    project = tmp_path / "project"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / "settings.json").write_text(json.dumps({"mcp": {"allowed": ["a", "c"]}}))
    trusted = {**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert [s.name for s in gemini.discover(["gemini"], project, trusted).servers] == ["a"]
    named = gemini.discover(["gemini", "--allowed-mcp-server-names", "b,c"], project, trusted)
    assert [s.name for s in named.servers] == ["b", "c"]


def test_gemini_lists_extension_and_project_agent_entries_and_marks_oauth_forward_only(tmp_path: Path) -> None:
    login = {"httpUrl": "https://x.example/mcp", "oauth": {"enabled": True}}
    env = _gemini_home(tmp_path, {"mcpServers": {"login": login}})
    user = Path(env["HOME"]) / ".gemini"
    (user / "extensions" / "ext").mkdir(parents=True)
    (user / "extensions" / "ext" / "gemini-extension.json").write_text(
        json.dumps({"name": "ext", "mcpServers": {"extsrv": {"command": "node"}}})
    )
    project = tmp_path / "project"
    (project / ".gemini" / "agents").mkdir(parents=True)
    remote = project / ".gemini" / "agents" / "remote.md"
    remote.write_text("---\nname: far\nagent_card_url: http://127.0.0.1:9/c\n---\n")
    found = gemini.discover(["gemini"], project, {**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert [(s.name, s.forward_only) for s in found.servers] == [
        ("login", "it logs in with OAuth, which Gemini ties to the server's URL")
    ]
    names = [line.split(":")[0] for line in found.skipped]
    assert names == ["extsrv (extension ext)", f"agent far (project, {remote})"]


def test_gemini_redirects_the_users_remote_agents_in_a_private_agents_folder(tmp_path: Path) -> None:
    env = _gemini_home(tmp_path, {"agents": {"overrides": {"off": {"enabled": False}}}})
    agents = Path(env["HOME"]) / ".gemini" / "agents"
    agents.mkdir()
    remote = "---\nkind: remote\nname: far\nagent_card_url: http://127.0.0.1:9/.well-known/agent-card.json\n---\n"
    (agents / "far.md").write_text(remote)
    (agents / "off.md").write_text("---\nname: off\nagent_card_url: http://127.0.0.1:7/c\n---\n")
    (agents / "local.md").write_text("---\nname: helper\ndescription: d\n---\nYou help.\n")
    (agents / "inline.md").write_text("---\nname: inl\nagent_card_json: '{}'\n---\n")
    project = tmp_path / "project"
    project.mkdir()
    found = gemini.discover(["gemini", "-p", "x"], project, env)
    assert [(s.name, s.scope, s.entry) for s in found.servers] == [
        ("far", "user agent", {"type": "a2a", "url": "http://127.0.0.1:9/.well-known/agent-card.json"})
    ]
    assert [line.split(":")[0] for line in found.skipped] == [f"agent inl (user, {agents / 'inline.md'})"]
    launch = gemini.launch(found, {"far": {"type": "a2a", "url": "http://127.0.0.1:5/.well-known/agent-card.json"}})
    private = Path(launch.env["GEMINI_CLI_HOME"]) / ".gemini" / "agents"
    assert (private / "far.md").read_text() == (
        "---\nkind: remote\nname: far\nagent_card_url: http://127.0.0.1:5/.well-known/agent-card.json\n---\n"
    )
    assert oct((private / "far.md").stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in private.iterdir() if p.is_symlink()) == ["inline.md", "local.md", "off.md"]
    launch.cleanup()
    assert (agents / "far.md").read_text() == remote
