"""``wiretap -- claude`` with every server the real Claude Code (2.1.332, offline) loads: plugins', agents',
and what wiretap cannot wrap; and the modes that load fewer (``--bare``, ``--safe-mode``).

One project holds a local directory marketplace with a plugin whose ``.mcp.json`` server uses
``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}``, ``${user_config.greeting}`` and ``${HOME}``, a skills-dir
plugin (``$CLAUDE_CONFIG_DIR/skills/<name>/``), a ``--plugin-dir`` plugin declaring its server inline in
``plugin.json``, a project agent (``.claude/agents/helper.md``) with an inline server, a user server, and a
``ws`` server wiretap cannot wrap. Each server is the demo server behind ``scenarios/env_probe.py``, which
logs how Claude Code started it. The fake Messages API has the model run the agent, so its server starts.
Claude Code runs once to settle (its first run installs the marketplace plugin), then straight, then
through wiretap; the two runs are compared.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, all_tool_results, offered_tools
from support import paths
from support.wrapped_claude import PRINT_MODE, WIRETAP, Run, Session, run_claude_code, summary_folder

pytestmark = pytest.mark.slow

Json = dict[str, Any]
PROBE = paths.SCENARIOS / "env_probe.py"
AGENT_PROMPT = "say hi"
MARKET, ALPHA, GAMMA, DELTA, AGENT = "market", "alpha", "gamma", "delta", "helper"
WRAPPED = {
    f"plugin:{ALPHA}:tools": "marketplace",
    f"plugin:{GAMMA}:gsrv": "skills-dir",
    f"plugin:{DELTA}:dsrv": "plugin-dir",
    f"agent:{AGENT}:asrv": "agent",
    "usr": "user",
}
WS = "sock"


class AgentRunningAPI(FakeMessagesAPI):
    """Has the main conversation run the ``helper`` agent once; every other request gets a short text."""

    def answer(self, body: Json) -> Json:
        if "Agent" in offered_tools(body) and not all_tool_results(body):
            block = {
                "type": "tool_use",
                "id": "toolu_fake_agent",
                "name": "Agent",
                "input": {"subagent_type": AGENT, "description": "greet", "prompt": AGENT_PROMPT},
            }
            return self._message([block], "tool_use")
        return self._message([{"type": "text", "text": "done"}], "end_turn")


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2) + "\n")
    return path


def probe(log: Path, label: str, *args: str) -> Json:
    return {"command": sys.executable, "args": [str(PROBE), str(log), label, *args]}


def started(log: Path) -> list[Json]:
    """What each probe logged, in order (each run clears the log first)."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def by_label(lines: list[Json]) -> dict[str, Json]:
    return {line["label"]: line for line in lines}


def snapshot(folder: Path, skip: str = "wiretap-sessions") -> dict[str, str]:
    """Every file under ``folder`` with its content's hash."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != skip
    }


_PER_RUN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|agent-[0-9a-f]{16,}")


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """The files a run added, removed or changed, with per-run ids (session, agent) in their names as ``ID``."""
    paths = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    return {_PER_RUN.sub("ID", path) for path in paths}


def tool_lists(run: Run) -> list[list[str]]:
    return [[t["name"] for t in body.get("tools") or []] for body in run.requests]


def servers_of(run: Run) -> list[tuple[str, str]]:
    return sorted((s["name"], s["status"]) for s in run.claude.init["mcp_servers"])


@dataclass
class Runs:
    root: Path
    project: Path
    log: Path
    argv: list[str]
    direct: Run
    wrapped: Run
    started_direct: list[Json]
    started_wrapped: list[Json]
    changed_direct: set[str]
    changed_wrapped: set[str]
    session: Session


def run_both(root: Path, project: Path, log: Path, argv: list[str], settle: bool = False) -> Runs:
    config = root / "home" / ".claude"

    def once(command: list[str]) -> tuple[Run, list[Json], set[str]]:
        log.unlink(missing_ok=True)
        before = snapshot(config) | {f"project/{k}": v for k, v in snapshot(project).items()}
        run = run_claude_code_with(command, root, project)
        assert run.claude.returncode == 0, run.claude.describe()
        after = snapshot(config) | {f"project/{k}": v for k, v in snapshot(project).items()}
        return run, started(log), changed(before, after)

    for _ in range(2 if settle else 0):  # the first runs install the marketplace's plugin
        once(argv)
    direct, started_direct, changed_direct = once(argv)
    wrapped, started_wrapped, changed_wrapped = once([*WIRETAP, "--", *argv])
    session = Session.read(project / summary_folder(wrapped.claude.stderr))
    return Runs(
        root,
        project,
        log,
        argv,
        direct,
        wrapped,
        started_direct,
        started_wrapped,
        changed_direct,
        changed_wrapped,
        session,
    )


def run_claude_code_with(command: list[str], root: Path, project: Path) -> Run:
    return run_claude_code(command, root=root, cwd=project, script=[], api_class=AgentRunningAPI)


@pytest.fixture(scope="module")
def setup(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    root = tmp_path_factory.mktemp("claude-plugins")
    project, config, log = root / "project", root / "home" / ".claude", root / "started.jsonl"
    market = root / MARKET
    write(market / ".claude-plugin" / "marketplace.json", {
        "name": MARKET, "owner": {"name": "wiretap tests"}, "plugins": [{"name": ALPHA, "source": f"./{ALPHA}"}],
    })  # fmt: skip
    write(market / ALPHA / ".claude-plugin" / "plugin.json", {
        "name": ALPHA, "version": "1.0.0",
        "userConfig": {"greeting": {"type": "string", "title": "Greeting", "description": "How to greet"}},
    })  # fmt: skip
    alpha = probe(log, "marketplace", "${CLAUDE_PLUGIN_ROOT}", "${CLAUDE_PLUGIN_DATA}", "${user_config.greeting}")
    alpha["args"].append("${HOME}")
    write(market / ALPHA / ".mcp.json", {"mcpServers": {"tools": alpha}})
    write(config / "settings.json", {
        "enableAllProjectMcpServers": True,
        "extraKnownMarketplaces": {MARKET: {"source": {"source": "directory", "path": str(market)}}},
        "enabledPlugins": {f"{ALPHA}@{MARKET}": True},
        "pluginConfigs": {f"{ALPHA}@{MARKET}": {"options": {"greeting": "hello"}}},
    })  # fmt: skip
    write(config / "skills" / GAMMA / ".claude-plugin" / "plugin.json", {"name": GAMMA, "version": "1.0.0"})
    write(
        config / "skills" / GAMMA / ".mcp.json",
        {"mcpServers": {"gsrv": probe(log, "skills-dir", "${CLAUDE_PLUGIN_ROOT}")}},
    )
    plugin_dir = root / "inline-plugin"
    write(plugin_dir / ".claude-plugin" / "plugin.json", {
        "name": DELTA, "version": "1.0.0", "mcpServers": {"dsrv": probe(log, "plugin-dir", "${CLAUDE_PLUGIN_DATA}")},
    })  # fmt: skip
    agent = {"type": "stdio", **probe(log, "agent")}
    write(project / ".claude" / "agents" / f"{AGENT}.md", (
        f"---\nname: {AGENT}\ndescription: Greets.\ntools: Read, Grep\nmcpServers:\n"
        f"  - asrv: {json.dumps(agent)}\n---\nYou greet.\n"
    ))  # fmt: skip
    write(project / ".mcp.json", {"mcpServers": {WS: {"type": "ws", "url": "ws://127.0.0.1:9/mcp"}}})
    claude_json = {
        "mcpServers": {"usr": probe(log, "user")},
        "projects": {str(project): {"hasTrustDialogAccepted": True}},
    }
    write(config / ".claude.json", claude_json)
    return root, project, log, plugin_dir


@pytest.fixture(scope="module")
def everything(claude_code_bin: Path, setup: tuple[Path, Path, Path, Path]) -> Runs:
    root, project, log, plugin_dir = setup
    argv = [str(claude_code_bin), "-p", "hi", "--allowedTools", "Agent", "--plugin-dir", str(plugin_dir), *PRINT_MODE]
    return run_both(root, project, log, argv, settle=True)


def test_every_plugin_agent_and_user_server_is_recorded(everything: Runs) -> None:
    manifest = everything.session.manifest
    recorded = {s["name"]: s["messages"] for s in manifest["servers"]}
    assert set(recorded) == {*WRAPPED, WS}, manifest["servers"]
    for name in WRAPPED:
        recording = everything.session.recordings[name]
        assert recording.messages()[0]["msg"]["method"] in {"server/discover", "initialize"}, name
        assert [m["msg"]["method"] for m in recording.requests("tools/list")] == ["tools/list"], name
        assert recorded[name] == len(recording.messages())


def test_claude_code_has_the_same_servers_and_offers_the_model_the_same_tools_through_wiretap(everything: Runs) -> None:
    direct, wrapped = everything.direct, everything.wrapped
    names = {name for name, _ in servers_of(direct)}
    assert {f"plugin:{ALPHA}:tools", f"plugin:{GAMMA}:gsrv", f"plugin:{DELTA}:dsrv", "usr", WS} <= names
    assert servers_of(wrapped) == servers_of(direct)
    lists = tool_lists(direct)
    assert any(f"mcp__plugin_{ALPHA}_tools__echo" in tools for tools in lists)
    assert any("mcp__asrv__echo" in tools for tools in lists)  # the agent's own request
    assert tool_lists(wrapped) == lists


def test_each_server_is_started_with_the_same_arguments_directory_and_plugin_variables(everything: Runs) -> None:
    direct, wrapped = by_label(everything.started_direct), by_label(everything.started_wrapped)
    assert set(direct) == set(wrapped) == set(WRAPPED.values())
    assert wrapped == direct
    config = everything.root / "home" / ".claude"
    assert direct["marketplace"]["args"] == [
        str(everything.root / MARKET / ALPHA),
        str(config / "plugins" / "data" / f"{ALPHA}-{MARKET}"),
        "hello",
        str(everything.root / "home"),
    ]
    assert direct["marketplace"]["env"] == {
        "CLAUDE_PLUGIN_ROOT": str(everything.root / MARKET / ALPHA),
        "CLAUDE_PLUGIN_DATA": str(config / "plugins" / "data" / f"{ALPHA}-{MARKET}"),
    }
    assert direct["skills-dir"]["args"] == [str(config / "skills" / GAMMA)]
    assert direct["plugin-dir"]["args"] == [str(config / "plugins" / "data" / f"{DELTA}-inline")]


def test_a_websocket_server_goes_behind_a_proxy_and_fails_as_it_does_without_wiretap(everything: Runs) -> None:
    assert (WS, dict(servers_of(everything.direct))[WS]) in servers_of(everything.wrapped)
    assert dict(servers_of(everything.direct))[WS] == "failed", "nothing listens on its port"
    [server] = [s for s in everything.session.manifest["servers"] if s["name"] == WS]
    assert server["transport"] == "ws"
    assert everything.session.manifest["not_wrapped"] == []


def test_wiretap_changes_no_file_beyond_what_claude_code_changes_itself(everything: Runs) -> None:
    assert everything.changed_wrapped == everything.changed_direct


def test_the_generated_config_holds_the_plugin_servers_under_claude_codes_names_and_not_the_agents(
    everything: Runs,
) -> None:
    [config] = [c for seen in everything.wrapped.watched for c in seen][:1]
    assert set(config.content["mcpServers"]) == {*WRAPPED, WS} - {f"agent:{AGENT}:asrv"}
    [reader] = config.readers
    assert "--strict-mcp-config" not in reader
    agents = json.loads(reader[reader.index("--agents") + 1])
    assert list(agents) == [AGENT]
    [server] = agents[AGENT]["mcpServers"]
    assert list(server) == ["asrv"] and server["asrv"]["args"][:3] == ["-m", "wiretap", "tap"]


# Modes that load fewer servers.


@pytest.fixture(scope="module")
def command_line_config(setup: tuple[Path, Path, Path, Path]) -> Path:
    root, _, log, _ = setup
    return write(root / "extra.json", {"mcpServers": {"extra": probe(log, "command-line")}})


@pytest.mark.parametrize("mode", ["--bare", "--safe-mode"])
def test_a_mode_starts_the_same_servers_and_lists_the_same_ones_through_wiretap(
    mode: str, claude_code_bin: Path, setup: tuple[Path, Path, Path, Path], command_line_config: Path
) -> None:
    root, project, log, plugin_dir = setup
    argv = [
        str(claude_code_bin), mode, "-p", "hi", "--plugin-dir", str(plugin_dir),
        "--mcp-config", str(command_line_config), *PRINT_MODE,
    ]  # fmt: skip
    runs = run_both(root, project, log, argv)
    assert servers_of(runs.wrapped) == servers_of(runs.direct)
    assert sorted(s["label"] for s in runs.started_wrapped) == sorted(s["label"] for s in runs.started_direct)
    expected = ["command-line"] if mode == "--bare" else []
    assert [s["label"] for s in runs.started_direct] == expected
    assert [s["name"] for s in runs.session.manifest["servers"]] == (["extra"] if mode == "--bare" else [])
    assert tool_lists(runs.wrapped) == tool_lists(runs.direct)
