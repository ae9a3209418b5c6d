"""``wiretap -- claude …`` with the real Claude Code (2.1.332, offline, fake Messages API).

Each scenario runs Claude Code twice in the same project, first straight and then through wiretap,
and compares what it did; what wiretap recorded and what it left behind are checked against the
two runs. Every run goes through a small launcher that makes itself a child subreaper
(``PR_SET_CHILD_SUBREAPER``): whatever wiretap or Claude Code started and left running is
re-parented to it, so "no process left over" means exactly that, whatever started it.

- A project whose ``.mcp.json`` holds a stdio server (the demo server) and a Streamable HTTP server
  (the MCP Python SDK 2.3.0 on 127.0.0.1), approved in ``$CLAUDE_CONFIG_DIR/settings.json``, plus a
  user-scope and a local-scope server in ``$CLAUDE_CONFIG_DIR/.claude.json``.
- Servers named only on the command line (``--mcp-config FILE JSON --strict-mcp-config``), with
  ``${VAR}`` and ``${VAR:-default}`` in their entries, one whose command does not exist, and one that
  closes on Claude Code's ``server/discover`` probe (Claude Code starts it again, legacy).
- Exit statuses: a failed run (``--max-turns``), and a SIGTERM sent to wiretap.
- Claude Code's TUI through wiretap in tmux: keys in, screen out, wiretap's summary after.
- ``wiretap sessions``, ``wiretap show DIR`` and ``wiretap report DIR`` on a real session folder.

The strict xfails are wiretap bugs, described where they are marked.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse, tool_use_id
from support import paths
from support.claude import API_KEY, ClaudeRun, offline_env
from support.eventually import eventually
from support.wrapped_claude import (
    PRINT_MODE,
    PROMPT_MARK,
    REAPER,
    TEMP_CONFIG,
    WIRETAP,
    Json,
    Run,
    Session,
    Tmux,
    approve_project_servers,
    cmdline,
    has_answer,
    processes_mentioning,
    run_claude_code,
    running,
    summary_folder,
    wrapped,
)

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
DEMO = [sys.executable, "-m", "wiretap.demo.server"]
HANDSHAKES = {"server/discover", "initialize"}


# Processes.


# The MCP SDK 2.3.0 Streamable HTTP server (tests/peer_scripts/mcp_sdk_http_server.py).


@pytest.fixture(scope="module")
def http_server(mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Its endpoint URL on 127.0.0.1; stopped with SIGINT (its process group killed) at the end."""
    root = tmp_path_factory.mktemp("sdk-http-server")
    argv = [str(mcp_sdk_python), str(PEER_SCRIPTS / "mcp_sdk_http_server.py"), "--log", str(root / "server.jsonl")]
    stderr = root / "stderr.txt"
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True
        )
    assert proc.stdout is not None
    try:
        url = ""
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            if selector.select(30):
                url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the MCP SDK server printed no URL: {stderr.read_text()[-4000:]}"
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()


# One run of Claude Code, straight or through wiretap.


# Reading a session.


# Comparing runs: what may differ between two runs of Claude Code, whatever ran them.

VOLATILE = {"session_id", "uuid", "timestamp", "messaging_socket_path"}


def stable(value: Any) -> Any:
    """``value`` without per-run ids, timestamps and durations (``*_ms``)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE and not k.endswith("_ms")}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def stable_request(body: Json) -> Json:
    """A Messages API request body without the session id that Claude Code puts in ``metadata.user_id``."""
    body = json.loads(json.dumps(body))
    metadata = body.get("metadata") or {}
    if isinstance(metadata.get("user_id"), str):
        user = json.loads(metadata["user_id"])
        user.pop("session_id", None)
        metadata["user_id"] = user
    return body


def stable_events(run: ClaudeRun) -> list[Any]:
    """The stream-json events, with the init event's MCP servers as (name, status) pairs by name.

    Through wiretap every wrapped server comes from the generated --mcp-config file: Claude Code lists them as
    "dynamic"; ``test_claude_code_sees_the_wrapped_servers_as_dynamic_and_lists_them_in_its_own_order`` says so.
    """
    events = []
    for event in run.events:
        event = stable(event)
        if event.get("type") == "system" and event.get("subtype") == "init":
            event["mcp_servers"] = sorted((s["name"], s["status"]) for s in event["mcp_servers"])
        events.append(event)
    return events


def mcp_servers(run: ClaudeRun) -> dict[str, str]:
    return {s["name"]: s["status"] for s in run.init["mcp_servers"]}


def files(*paths: Path) -> dict[str, bytes | None]:
    return {str(p): p.read_bytes() if p.exists() else None for p in paths}


def listing(folder: Path, *, skip: str) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.relative_to(folder).parts[0] != skip)


# The project scenario: a stdio and an HTTP server in .mcp.json.

STDIO, HTTP, USER, LOCAL = "demo", "web", "mine", "here"
SCOPES = {STDIO: "project", HTTP: "project", USER: "user", LOCAL: "local"}
PROJECT_SCRIPT = [
    ToolUse(f"mcp__{STDIO}__echo", {"text": 'héllo ✓ stdio — 1 < 2 & "quoted"'}),
    ToolUse(f"mcp__{HTTP}__echo", {"text": "héllo ✓ http\tand\\slash"}),
]


@dataclass
class ProjectScenario:
    root: Path
    project: Path
    http_url: str
    argv: list[str]
    direct: Run
    wrapped: Run
    session: Session
    before: dict[str, bytes | None]
    after: dict[str, bytes | None]
    listing_before: list[str]
    listing_after: list[str]


@pytest.fixture(scope="module")
def project(claude_code_bin: Path, http_server: str, tmp_path_factory: pytest.TempPathFactory) -> ProjectScenario:
    root = tmp_path_factory.mktemp("claude-project")
    project = root / "project"
    project.mkdir()
    mcp_json = {
        "mcpServers": {
            STDIO: {"type": "stdio", "command": DEMO[0], "args": DEMO[1:]},
            HTTP: {"type": "http", "url": http_server},
        }
    }
    (project / ".mcp.json").write_text(json.dumps(mcp_json, indent=2) + "\n")
    approve_project_servers(root)
    # A user-scope and a local-scope server too, as `claude mcp add --scope user|local` writes them.
    demo = {"type": "stdio", "command": DEMO[0], "args": DEMO[1:], "env": {}}
    claude_json = {"mcpServers": {USER: demo}, "projects": {str(project): {"mcpServers": {LOCAL: demo}}}}
    (root / "home" / ".claude" / ".claude.json").write_text(json.dumps(claude_json, indent=2) + "\n")
    argv = [
        str(claude_code_bin), "-p", "Call the echo tool of each MCP server.",
        "--allowedTools", ",".join(step.name for step in PROJECT_SCRIPT),
        *PRINT_MODE,
    ]  # fmt: skip
    # Straight first: Claude Code writes $CLAUDE_CONFIG_DIR/.claude.json on its first run.
    direct = run_claude_code(argv, root=root, cwd=project, script=PROJECT_SCRIPT)
    assert direct.claude.returncode == 0, direct.claude.describe()
    config = root / "home" / ".claude"
    watched = [project / ".mcp.json", config / ".claude.json", config / "settings.json"]
    before, listing_before = files(*watched), listing(project, skip="wiretap-sessions")
    # No --out: the session goes to ./wiretap-sessions/<UTC>/.
    run = run_claude_code(wrapped(argv), root=root, cwd=project, script=PROJECT_SCRIPT)
    assert run.claude.returncode == 0, run.claude.describe()
    [folder] = (project / "wiretap-sessions").iterdir()
    return ProjectScenario(
        root,
        project,
        http_server,
        argv,
        direct,
        run,
        Session.read(folder),
        before,
        files(*watched),
        listing_before,
        listing(project, skip="wiretap-sessions"),
    )


def test_claude_code_answers_through_wiretap_exactly_as_it_does_without_it(project: ProjectScenario) -> None:
    direct, run = project.direct.claude, project.wrapped.claude
    assert mcp_servers(direct) == dict.fromkeys(SCOPES, "connected"), direct.describe()
    assert mcp_servers(run) == mcp_servers(direct), run.describe()
    assert run.result["subtype"] == "success" and run.result_text == direct.result_text
    assert len(project.wrapped.tool_results) == 2
    assert project.wrapped.tool_results == project.direct.tool_results
    assert not any(r.get("is_error") for r in project.wrapped.tool_results)
    # The model saw the same tools, prompts and results: every request to the API is the same.
    assert [stable_request(b) for b in project.wrapped.requests] == [stable_request(b) for b in project.direct.requests]
    assert stable_events(run) == stable_events(direct)


def test_claude_code_sees_the_wrapped_servers_as_dynamic_and_lists_them_in_its_own_order(
    project: ProjectScenario,
) -> None:
    """What Claude Code shows differently: each wrapped server comes from the generated --mcp-config, which
    takes the place of the configured server of that name, where that one was in the list."""
    direct = project.direct.claude.init["mcp_servers"]
    assert {s["name"]: s["source"] for s in direct} == SCOPES
    wrapped_servers = project.wrapped.claude.init["mcp_servers"]
    # An HTTP server keeps its entry: it is recorded through the forward proxy, its URL unchanged.
    assert {s["name"]: s["source"] for s in wrapped_servers} == dict.fromkeys(SCOPES, "dynamic") | {HTTP: SCOPES[HTTP]}
    assert [s["name"] for s in wrapped_servers] == [s["name"] for s in direct]


def test_wiretap_exits_with_claude_codes_status_and_prints_only_its_summary_afterwards(
    project: ProjectScenario,
) -> None:
    direct, run = project.direct.claude, project.wrapped.claude
    assert run.returncode == direct.returncode == 0
    assert direct.stderr == ""
    assert run.stderr.startswith("wiretap: session "), run.stderr
    folder = summary_folder(run.stderr)
    assert (project.project / folder).resolve() == project.session.folder.resolve()
    assert folder.parent == Path("wiretap-sessions")
    for server in project.session.manifest["servers"]:
        assert f"  {server['name']} ({server['transport']}): {server['messages']} messages\n" in run.stderr
    assert f"read it with: wiretap show {folder}" in run.stderr
    # stdout is Claude Code's alone: every line one of its stream-json events.
    assert len(run.events) == len(run.stdout.splitlines()) == len(direct.events)


def test_the_session_records_each_servers_handshake_tool_list_and_tool_call(project: ProjectScenario) -> None:
    session = project.session
    for name, step in zip((STDIO, HTTP), PROJECT_SCRIPT, strict=True):
        recording = session.recordings[name]
        first = recording.messages()[0]
        assert first["dir"] == "c2s" and first["msg"]["method"] in HANDSHAKES, name
        [tools_list] = recording.requests("tools/list")
        assert "echo" in {t["name"] for t in recording.answer(tools_list)["msg"]["result"]["tools"]}
        [call] = recording.requests("tools/call")
        assert call["msg"]["params"]["name"] == "echo"
        assert call["msg"]["params"]["arguments"] == step.input
        assert call["msg"]["params"]["_meta"]["claudecode/toolUseId"] == tool_use_id(PROJECT_SCRIPT.index(step))
        answer = recording.answer(call)["msg"]["result"]
        assert answer["content"] == [{"type": "text", "text": step.input["text"]}]
        steps = [first, recording.answer(first), tools_list, recording.answer(tools_list), call]
        assert [recording.index(e) for e in steps] == sorted(recording.index(e) for e in steps)
    # The user and local servers were started and listed, though no tool of theirs was called.
    for name in (USER, LOCAL):
        recording = session.recordings[name]
        assert recording.messages()[0]["msg"]["method"] in HANDSHAKES
        recording.answer(recording.requests("tools/list")[0])
        assert recording.requests("tools/call") == []
    for name in SCOPES:
        assert session.server(name)["messages"] == len(session.recordings[name].messages())
    assert session.recordings[STDIO].header["argv"] == DEMO
    # Forward mode records per site: the upstream is the origin the client kept in its URL.
    assert session.recordings[HTTP].header["upstream"] == project.http_url.removesuffix("/mcp")


def test_the_manifest_describes_the_run(project: ProjectScenario) -> None:
    manifest = project.session.manifest
    assert manifest["kind"] == "wiretap-session" and manifest["client"] == "Claude Code"
    assert manifest["client_info"] == {"name": "claude-code", "version": "2.1.332"}
    assert manifest["client_argv"] == project.argv
    assert Path(manifest["cwd"]) == project.project
    assert manifest["running"] is False
    assert manifest["exit"] == {"code": 0}
    assert 0 <= manifest["client_started"] < manifest["client_exited"]
    assert manifest["servers"] == [
        {
            "name": name,
            "scope": SCOPES[name],
            "transport": "http" if name == HTTP else "stdio",
            "recording": f"{name}.jsonl",
            "recordings": [f"{name}.jsonl"],
            "messages": len(project.session.recordings[name].messages()),
            "complete": True,
            "missing_variables": [],
            "limits": {},
        }
        for name in (LOCAL, STDIO, HTTP, USER)
    ]
    assert manifest["not_wrapped"] == []
    assert (project.session.folder.stat().st_mode & 0o777) == 0o700


def test_the_stdio_recordings_show_claude_codes_shutdown_signals(project: ProjectScenario) -> None:
    for name in (STDIO, USER, LOCAL):
        recording = project.session.recordings[name]
        signals = recording.of_kind("signal")
        assert signals, f"{name}: no signal recorded: Claude Code did not signal the tap"
        assert signals[0]["signal"] == "SIGINT" and signals[0]["forwarded"] is True
        assert [s["signal"] for s in signals] in (["SIGINT"], ["SIGINT", "SIGTERM"])
        last_answer = [e for e in recording.messages() if e["dir"] == "s2c"][-1]
        assert recording.index(last_answer) < recording.index(signals[0])
        # Claude Code signals without closing the server's stdin first.
        stdin_closed = [e for e in recording.of_kind("eof") if e["dir"] == "c2s"]
        assert all(recording.index(e) > recording.index(signals[0]) for e in stdin_closed)
        [exit_event] = recording.of_kind("exit")
        assert recording.index(exit_event) > recording.index(signals[0])
        # The server dies of one of the signals forwarded before its exit: SIGINT, or the SIGTERM that
        # followed it when Claude Code's second signal arrived first.
        forwarded_before = [s["signal"] for s in signals if recording.index(s) < recording.index(exit_event)]
        assert exit_event["signal"] in forwarded_before
        assert recording.events[-1]["kind"] == "end"


def test_the_users_config_files_are_byte_identical_afterwards(project: ProjectScenario) -> None:
    assert all(content is not None for content in project.before.values()), project.before.keys()
    assert project.after == project.before
    # Nothing new in the project either, but the session folder.
    assert project.listing_after == project.listing_before


def test_no_tap_proxy_or_server_process_outlives_wiretap(project: ProjectScenario) -> None:
    assert project.wrapped.left == []
    pids = [project.session.recordings[name].header["pid"] for name in SCOPES]
    pids += [project.session.recordings[name].of_kind("spawn")[0]["pid"] for name in (STDIO, USER, LOCAL)]
    for pid in pids:
        assert not running(pid) or str(project.session.folder) not in " ".join(cmdline(pid)), pid
    assert processes_mentioning(str(project.session.folder)) == []


def test_the_generated_config_is_private_while_claude_code_runs_and_gone_afterwards(project: ProjectScenario) -> None:
    run, folder = project.wrapped, project.session.folder
    assert run.watched and all(len(seen) == 1 for seen in run.watched), run.watched
    config = run.watched[0][0]
    assert config.path.parent == run.tmpdir and config.mode == 0o600
    servers = config.content["mcpServers"]
    # The default session folder is relative, and so is the tap's --out: Claude Code starts stdio servers in
    # its own working directory (it ignores a "cwd" in a server entry), which is the project.
    recordings = {name: servers[name]["args"][4] for name in (STDIO, USER, LOCAL)}
    for name, recording in recordings.items():
        assert (project.project / recording).resolve() == (folder / f"{name}.jsonl").resolve()

    def tapped(name: str, **extra: Any) -> Json:
        args = ["-m", "wiretap", "tap", "--out", recordings[name], "--name", name, "--", *DEMO]
        return {"type": "stdio", "command": sys.executable, "args": args, **extra}

    # The HTTP server is not in it: Claude Code reaches it at its own URL through the forward proxy.
    assert servers == {
        LOCAL: tapped(LOCAL, env={}),
        STDIO: tapped(STDIO),
        USER: tapped(USER, env={}),
    }
    # Claude Code ran with it beside its own config (no --strict-mcp-config), and with the user's arguments.
    assert config.readers == [[project.argv[0], "--mcp-config", str(config.path), *project.argv[1:]]]
    assert list(run.tmpdir.glob(TEMP_CONFIG)) == []


def test_sessions_lists_the_session_and_show_and_report_read_it(project: ProjectScenario) -> None:
    folder = project.session.folder
    listed = subprocess.run(
        [*WIRETAP, "sessions"], cwd=project.project, capture_output=True, text=True, timeout=30, check=True
    ).stdout
    elsewhere = subprocess.run(
        [*WIRETAP, "sessions", "--in", str(folder.parent)], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    for out in (listed, elsewhere):
        [line] = out.splitlines()
        assert folder.name in line and project.session.manifest["started"] in line
        assert "[exit 0]" in line and "  claude-code 2.1.332  " in line
        for server in project.session.manifest["servers"]:
            assert f"{server['name']} ({server['messages']} msgs)" in line
    shown = subprocess.run(
        [*WIRETAP, "show", str(folder), "--no-color"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    # One timeline on the client's clock, a server column after the time.
    names = [s["name"] for s in project.session.manifest["servers"]]
    assert {line.split()[1] for line in shown.splitlines()} == set(names)
    parts = {name: "\n".join(line for line in shown.splitlines() if line.split()[1] == name) for name in names}
    for name in (STDIO, HTTP):
        assert re.search(r"IN +(?:\S+ +)?tools/call +#\S+ echo ", parts[name]), parts[name]
        assert re.search(r"OUT +(?:\S+ +)?tools/call +#\S+ ok ", parts[name]), parts[name]
    rows = subprocess.run(
        [*WIRETAP, "show", str(folder), "--json"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()
    assert [json.loads(row)["server"] for row in rows] == [line.split()[1] for line in shown.splitlines()]
    assert "SIGINT received, forwarded to the server" in parts[STDIO]
    reported = subprocess.run(
        [*WIRETAP, "report", str(folder), "--format", "json"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    document = json.loads(reported)
    assert document["session"] == project.session.manifest
    reports = {r["recording"]["name"]: r for r in document["reports"]}
    assert list(reports) == [s["name"] for s in project.session.manifest["servers"]]
    for name, report in reports.items():
        assert report["recording"]["transport"] == project.session.server(name)["transport"]
        # The manifest counts every message event; the report counts JSON-RPC messages and names the rest.
        counted = report["messages"]["c2s"] + report["messages"]["s2c"] + sum(report["messages"]["other"].values())
        assert counted == project.session.server(name)["messages"]
    assert reports[STDIO]["client_exit"]["how"] == "SIGINT"
    # SIGINT, or SIGTERM when the server was slow to go (Claude Code escalates after 100 ms).
    [exit_event] = project.session.recordings[STDIO].of_kind("exit")
    assert reports[STDIO]["server_exit"]["how"] == f"was killed by {exit_event['signal']}"


# Servers named on the command line: a file and a JSON string, ${VAR} expansion, a missing command.

# A demo server that first appends [its name, its arguments, $WT_GREETING] to the log file given as its
# first argument: what it was started with, straight or through the tap.
LOGGING_SERVER = (
    "import json, os, runpy, sys\n"
    "with open(sys.argv[1], 'a') as log:\n"
    "    log.write(json.dumps([sys.argv[2], sys.argv[3:], os.environ.get('WT_GREETING')]) + '\\n')\n"
    "runpy.run_module('wiretap.demo.server', run_name='__main__')\n"
)
# The same, but closing at once when the first thing it reads is a server/discover probe, as servers built
# on rmcp (the Rust MCP SDK) do with any request before initialize: Claude Code then starts it again, legacy.
CLOSING_SERVER = (
    "import json, sys\n"
    "from wiretap.demo.server import handle\n"
    "with open(sys.argv[1], 'a') as log:\n"
    "    log.write(json.dumps([sys.argv[2], sys.argv[3:], None]) + '\\n')\n"
    "for line in sys.stdin:\n"
    "    if line.strip() and json.loads(line).get('method') == 'server/discover':\n"
    "        sys.exit(0)\n"
    "    if line.strip():\n"
    "        handle(line)\n"
)
MISSING = "wiretap-test-no-such-command"
CLI_SCRIPT = [
    ToolUse(f"mcp__{name}__echo", {"text": f"via {name}"}) for name in ("filed", "inline", "expanded", "closer")
]
CLI_ENV = {
    "WT_PYTHON": sys.executable,
    "WT_SET": "a value with spaces",
    "WT_EMPTY": "",
    "WT_DOLLAR": "${HOME}",
}


def logging_server(log: Path, name: str, *args: str, command: str = sys.executable, **env: str) -> Json:
    entry: Json = {"command": command, "args": ["-c", LOGGING_SERVER, str(log), name, *args]}
    return entry | ({"env": env} if env else {})


@dataclass
class Started:
    """What each server was started with in one run (from its log)."""

    lines: list[list[Any]]

    def of(self, name: str) -> list[list[Any]]:
        return [line for line in self.lines if line[0] == name]


@dataclass
class CliScenario:
    root: Path
    direct: Run
    wrapped: Run
    session: Session
    started_direct: Started
    started_wrapped: Started
    folder_files: list[str]


@pytest.fixture(scope="module")
def cli(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> CliScenario:
    root = tmp_path_factory.mktemp("claude-cli")
    project = root / "project"
    project.mkdir()
    log = root / "started.jsonl"
    # An approved project server that --strict-mcp-config keeps out, straight and through wiretap.
    project_servers = {"projected": logging_server(log, "projected")}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": project_servers}, indent=2) + "\n")
    approve_project_servers(root)
    filed = {
        "filed": logging_server(log, "filed"),
        "expanded": logging_server(
            log,
            "expanded",
            "${WT_SET}",
            "${WT_UNSET:-the default}",
            "${WT_EMPTY:-not used: set but empty}",
            command="${WT_PYTHON}",
            WT_GREETING="${WT_GREETING_UNSET:-hello from a default}",
        ),
        "unset": logging_server(log, "unset", "${WT_NOWHERE}"),
        "dollar": logging_server(log, "dollar", "${WT_DOLLAR}", WT_GREETING="${WT_DOLLAR}"),
        "ghost": {"command": MISSING, "args": ["--flag"]},
        "closer": {"command": sys.executable, "args": ["-c", CLOSING_SERVER, str(log), "closer"]},
    }
    (project / "servers.json").write_text(json.dumps({"mcpServers": filed}, indent=2) + "\n")
    inline = json.dumps({"mcpServers": {"inline": logging_server(log, "inline")}})
    argv = [
        str(claude_code_bin), "-p", "Call the echo tools.",
        "--mcp-config", "servers.json", inline, "--strict-mcp-config",
        "--allowedTools", ",".join(step.name for step in CLI_SCRIPT),
        *PRINT_MODE,
    ]  # fmt: skip

    def run(command: list[str]) -> tuple[Run, Started]:
        log.write_text("")
        result = run_claude_code(command, root=root, cwd=project, script=CLI_SCRIPT, env=CLI_ENV)
        assert result.claude.returncode == 0, result.claude.describe()
        return result, Started([json.loads(line) for line in log.read_text().splitlines()])

    direct, started_direct = run(argv)
    out = root / "session"
    wrapped_run, started_wrapped = run(wrapped(argv, "--out", str(out)))
    return CliScenario(
        root,
        direct,
        wrapped_run,
        Session.read(out),
        started_direct,
        started_wrapped,
        sorted(p.name for p in out.iterdir()),
    )


def test_servers_named_only_on_the_command_line_are_wrapped_and_their_tools_called(cli: CliScenario) -> None:
    direct, run = cli.direct.claude, cli.wrapped.claude
    assert mcp_servers(run) == mcp_servers(direct), run.describe()
    assert "projected" not in mcp_servers(direct)
    assert run.result_text == direct.result_text
    assert cli.wrapped.tool_results == cli.direct.tool_results
    assert [r["content"] for r in cli.wrapped.tool_results] == [
        [{"type": "text", "text": step.input["text"]}] for step in CLI_SCRIPT
    ]
    scopes = {s["name"]: s["scope"] for s in cli.session.manifest["servers"]}
    assert scopes == {
        "filed": "--mcp-config servers.json",
        "expanded": "--mcp-config servers.json",
        "unset": "--mcp-config servers.json",
        "dollar": "--mcp-config servers.json",
        "ghost": "--mcp-config servers.json",
        "closer": "--mcp-config servers.json",
        "inline": "--mcp-config (JSON)",
    }
    for step in CLI_SCRIPT[:3]:
        name = step.name.split("__")[1]
        [call] = cli.session.recordings[name].requests("tools/call")
        assert call["msg"]["params"]["arguments"] == step.input
    assert cli.started_wrapped.of("projected") == [] and cli.started_direct.of("projected") == []
    assert cli.wrapped.left == []


def test_variables_in_a_server_entry_are_expanded_as_claude_code_expands_them(cli: CliScenario) -> None:
    expected = [
        "expanded",
        ["a value with spaces", "the default", ""],
        "hello from a default",
    ]
    assert cli.started_direct.of("expanded") == [expected]
    assert cli.started_wrapped.of("expanded") == [expected]
    [spawn] = cli.session.recordings["expanded"].of_kind("spawn")
    assert spawn["argv"][0] == sys.executable
    assert spawn["argv"][-3:] == expected[1]
    assert cli.session.server("expanded")["missing_variables"] == []
    # A variable with neither a value nor a default stays as written, for Claude Code and for wiretap.
    assert cli.started_wrapped.of("unset") == cli.started_direct.of("unset") == [["unset", ["${WT_NOWHERE}"], None]]
    assert cli.session.server("unset")["missing_variables"] == ["WT_NOWHERE"]


def test_a_variables_value_that_looks_like_a_variable_is_expanded_only_once(cli: CliScenario) -> None:
    assert cli.started_direct.of("dollar") == [["dollar", ["${HOME}"], "${HOME}"]]
    assert cli.started_wrapped.of("dollar") == cli.started_direct.of("dollar")


def test_a_server_whose_command_does_not_exist_fails_for_claude_code_as_it_does_without_wiretap(
    cli: CliScenario,
) -> None:
    assert cli.direct.claude.mcp_status("ghost") == "failed"
    assert cli.wrapped.claude.mcp_status("ghost") == "failed"
    recording = cli.session.recordings["ghost"]
    [failed] = recording.of_kind("spawn_failed")
    assert failed["argv"] == [MISSING, "--flag"]
    assert failed["status"] == 127 and MISSING in failed["error"]
    assert recording.messages() == [] and recording.of_kind("spawn") == []
    assert cli.session.server("ghost")["messages"] == 0


def test_a_server_that_closes_on_the_discover_probe_is_started_again_through_wiretap_as_without_it(
    cli: CliScenario,
) -> None:
    assert cli.direct.claude.mcp_status("closer") == cli.wrapped.claude.mcp_status("closer") == "connected"
    assert cli.started_direct.of("closer") == cli.started_wrapped.of("closer") == [["closer", [], None]] * 2
    first = cli.session.recordings["closer"]
    assert [m["msg"].get("method") for m in first.messages()] == ["server/discover"]
    assert first.of_kind("exit")[0]["code"] == 0


def test_the_session_holds_the_traffic_of_a_server_claude_code_started_again(cli: CliScenario) -> None:
    shown = subprocess.run(
        [*WIRETAP, "show", str(cli.session.folder), "--json", "--server", "closer"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    rows = [json.loads(line) for line in shown.splitlines()]
    titles = [row["title"] for row in rows if row["title"] in ("spawn", "server/discover", "tools/call")]
    # Both recordings on one timeline: the probe, and the server Claude Code started again.
    assert titles[:3] == ["spawn", "server/discover", "spawn"], shown
    assert "tools/call" in titles[3:], shown
    assert cli.session.server("closer")["messages"] > 1


def test_every_recording_in_the_session_folder_is_listed_in_its_manifest(cli: CliScenario) -> None:
    listed = {name for s in cli.session.manifest["servers"] for name in s["recordings"]}
    recordings = {name for name in cli.folder_files if name.endswith(".jsonl")}
    assert recordings == listed


# Exit statuses other than success.


def test_wiretap_exits_with_claude_codes_failure_status(claude_code_bin: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = [ToolUse("mcp__demo__echo", {"text": "once"})]
    config = json.dumps({"mcpServers": {"demo": {"command": DEMO[0], "args": DEMO[1:]}}})
    argv = [str(claude_code_bin), "-p", "Go.", "--mcp-config", config, "--allowedTools", script[0].name]
    argv += ["--max-turns", "1", *PRINT_MODE]
    direct = run_claude_code(argv, root=tmp_path, cwd=project, script=script)
    run = run_claude_code(wrapped(argv, "--out", str(tmp_path / "session")), root=tmp_path, cwd=project, script=script)
    assert direct.claude.result["subtype"] == run.claude.result["subtype"] == "error_max_turns"
    assert run.claude.returncode == direct.claude.returncode == 1
    assert json.loads((tmp_path / "session" / "manifest.json").read_text())["exit"] == {"code": 1}
    assert run.left == []


def test_a_sigterm_to_wiretap_ends_claude_code_as_a_sigterm_to_claude_code_does(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    """Sent while a slow tool runs; wiretap passes it on and then ends the way Claude Code did."""
    project = tmp_path / "project"
    project.mkdir()
    called = tmp_path / "called"
    # The demo server, touching ``called`` when a tools/call arrives.
    server = (
        "import sys\n"
        "from wiretap.demo.server import handle\n"
        "for line in sys.stdin:\n"
        "    if '\"tools/call\"' in line:\n"
        "        open(sys.argv[1], 'a').close()\n"
        "    if line.strip():\n"
        "        handle(line)\n"
    )
    script = [ToolUse("mcp__demo__build_report", {"pages": 30})]
    config = json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": ["-c", server, str(called)]}}})
    argv = [str(claude_code_bin), "-p", "Go.", "--mcp-config", config, "--allowedTools", script[0].name, *PRINT_MODE]

    def terminate_during_the_tool_call(api: FakeMessagesAPI, pid: int) -> None:
        eventually(called.exists, "the tool was not called", 60)
        time.sleep(0.5)  # the call takes 9 s
        os.kill(pid, signal.SIGTERM)

    direct = run_claude_code(
        argv, root=tmp_path, cwd=project, script=script, while_running=terminate_during_the_tool_call
    )
    called.unlink()
    out = tmp_path / "session"
    run = run_claude_code(
        wrapped(argv, "--out", str(out)),
        root=tmp_path,
        cwd=project,
        script=script,
        while_running=terminate_during_the_tool_call,
    )
    assert direct.tool_results == run.tool_results == []
    assert run.claude.returncode == direct.claude.returncode, (run.claude.describe(), direct.claude.describe())
    session = Session.read(out)
    code = direct.claude.returncode
    assert session.manifest["exit"] == ({"code": code} if code >= 0 else {"signal": signal.Signals(-code).name})
    recording = session.recordings["demo"]
    [call] = recording.requests("tools/call")
    assert call["msg"]["params"]["name"] == "build_report"
    # Claude Code, terminated, signals the server in the middle of the call, which is never answered.
    signals = recording.of_kind("signal")
    assert signals and signals[0]["signal"] == "SIGINT" and recording.index(signals[0]) > recording.index(call)
    assert [e for e in recording.messages() if e["dir"] == "s2c" and e["msg"].get("id") == call["msg"]["id"]] == []
    assert recording.of_kind("exit"), "the server's end is not recorded"
    assert run.left == []


def test_a_client_that_cannot_be_started_leaves_a_session_that_is_not_running(tmp_path: Path) -> None:
    out = tmp_path / "session"
    missing = tmp_path / "no-such-dir" / "claude"
    env = os.environ | {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")}
    result = subprocess.run(
        wrapped([str(missing), "-p", "hi"], "--out", str(out)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0 and str(missing) in result.stderr
    assert json.loads((out / "manifest.json").read_text())["running"] is False


# Interactive: Claude Code's TUI through wiretap, in tmux.

PANE_WIDTH, PANE_HEIGHT = 120, 40
INTERACTIVE_TEXT = "typed in the pane"
INTERACTIVE_PROMPT = "Please call the echo tool"


@dataclass
class Interactive:
    ready: str
    """The screen once Claude Code's prompt is up."""
    answered: str
    """The screen once the fake API's answer is on it."""
    after: str
    """The screen after /exit."""
    reaped: Json
    session: Session
    api_tool_results: list[Json]
    tmpdir: Path


@pytest.fixture(scope="module")
def interactive(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interactive]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    root = tmp_path_factory.mktemp("tui")
    project = root / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {"command": DEMO[0], "args": DEMO[1:]}}}))
    approve_project_servers(root)
    # The first-run screens, answered as PEERS.md says.
    (root / "home" / ".claude" / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            }
        )
    )
    out, report = root / "session", root / "reaper.json"
    script = [ToolUse("mcp__demo__echo", {"text": INTERACTIVE_TEXT})]
    command = [sys.executable, "-c", REAPER, str(report)]
    command += wrapped([str(claude_code_bin), "--allowedTools", script[0].name], "--out", str(out))
    with FakeMessagesAPI(script) as api:
        env = {k: v for k, v in offline_env(root, api.url).items() if not k.startswith("TMUX")}
        (root / "tmp").mkdir()
        tmux = Tmux(root / "tmux.sock", env | {"TMPDIR": str(root / "tmp")})
        try:
            tmux(
                "new-session", "-d", "-x", str(PANE_WIDTH), "-y", str(PANE_HEIGHT), "-s", "main",
                "-c", str(project), *command,
                ";", "set-option", "-t", "main", "remain-on-exit", "on",
                cwd=project,
            )  # fmt: skip
            reaper = int(tmux.pane("pane_pid"))
            tmux.wait_for(PROMPT_MARK)
            # The TUI takes a prompt before its MCP servers are up (then the model is offered no MCP tool).
            recording = out / "demo.jsonl"
            eventually(lambda: has_answer(recording, "tools/list"), "no tools/list answered", 60, tmux.screen)
            time.sleep(1.0)  # for Claude Code to take the tools in, and the screen to settle
            ready = tmux.screen()
            tmux("send-keys", "-t", "main", "-l", INTERACTIVE_PROMPT)
            tmux.wait_for(INTERACTIVE_PROMPT, 15)
            tmux("send-keys", "-t", "main", "Enter")
            answered = tmux.wait_for("Tool results:")
            tmux("send-keys", "-t", "main", "-l", "/exit")
            tmux.wait_for("/exit", 15)
            time.sleep(0.3)  # the command menu
            tmux("send-keys", "-t", "main", "Enter")
            # The reaper writes its report, then exits as wiretap did. (tmux's own pane_dead_status is not
            # dependable here: tmux 3.3a now and then leaves the pane's process a zombie it never reaps.)
            ended = lambda: report.exists() and not running(reaper)  # noqa: E731
            eventually(ended, "wiretap did not end", 30, tmux.screen)
            after = tmux.screen(joined=True)
        finally:
            tmux.kill_everything()
        tool_results = api.tool_results()
    yield Interactive(
        ready, answered, after, json.loads(report.read_text()), Session.read(out), tool_results, root / "tmp"
    )


def test_claude_codes_screen_through_wiretap_is_intact_and_free_of_wiretap_output(interactive: Interactive) -> None:
    for screen in (interactive.ready, interactive.answered):
        assert "Claude Code v2.1.332" in screen, screen
        assert PROMPT_MARK in screen, screen
        # Nothing of wiretap's: its lines start "wiretap: " (its summary, a tap's or a proxy's notes).
        assert not re.search(r"^\s*wiretap: ", screen, re.MULTILINE) and "read it with" not in screen, screen
        assert len(screen.splitlines()) == PANE_HEIGHT
        assert max(map(len, screen.splitlines())) <= PANE_WIDTH


def test_keys_reach_claude_code_through_wiretap_and_the_fake_apis_answer_appears(interactive: Interactive) -> None:
    assert f"{PROMPT_MARK} {INTERACTIVE_PROMPT}" in interactive.answered
    assert f'Tool results: [[{{"text": "{INTERACTIVE_TEXT}", "type": "text"}}]]' in interactive.answered
    assert interactive.api_tool_results[0]["content"] == [{"type": "text", "text": INTERACTIVE_TEXT}]


def test_after_exit_wiretap_prints_its_summary_and_the_session_has_the_stdio_recording(
    interactive: Interactive,
) -> None:
    session = interactive.session
    assert f"wiretap: session {session.folder}" in interactive.after
    assert f"demo (stdio): {session.server('demo')['messages']} messages" in interactive.after
    assert interactive.reaped["returncode"] == 0
    assert session.manifest["exit"] == {"code": 0}
    recording = session.recordings["demo"]
    [call] = recording.requests("tools/call")
    assert call["msg"]["params"]["arguments"] == {"text": INTERACTIVE_TEXT}
    assert recording.answer(call)["msg"]["result"]["content"] == [{"type": "text", "text": INTERACTIVE_TEXT}]
    # At /exit Claude Code signals the server as in print mode.
    signals = recording.of_kind("signal")
    assert signals and signals[0]["signal"] == "SIGINT" and signals[0]["forwarded"] is True
    assert recording.index(signals[0]) > recording.index(recording.answer(call))
    assert recording.of_kind("exit") and recording.events[-1]["kind"] == "end"
    assert interactive.reaped["left"] == []
    assert list(interactive.tmpdir.glob(TEMP_CONFIG)) == []
