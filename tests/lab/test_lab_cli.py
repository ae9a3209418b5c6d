"""``wiretap lab -- CLIENT``: what the client is started with (the lab server in its generated config, the
prompt, the scripted model's throwaway home), against a stand-in ``claude`` that writes down its argv,
environment, working folder, config and stdin; and the one-line refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wiretap.cli import routed
from wiretap.lab.conditions import BY_NAME
from wiretap.lab.offline import API_KEY
from wiretap.lab.run import scripted_argv, with_prompt
from wiretap.lab.script import prompt, walk
from wiretap.recording.folders import MANIFEST

USERS_KEY = "sk-ant-users-own-key-abcdef"
STAND_IN = """#!{python}
import json, os, sys
argv = sys.argv[1:]
config = argv[argv.index("--mcp-config") + 1] if "--mcp-config" in argv else None
seen = {{
    "argv": argv,
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "config": json.load(open(config)) if config else None,
    "stdin": sys.stdin.readline() if "stream-json" in argv else None,
}}
json.dump(seen, open(os.environ["LAB_STAND_IN_OUT"], "w"))
if os.environ.get("LAB_STAND_IN_CALL") and config:
    import subprocess
    entry = seen["config"]["mcpServers"]["wiretap-lab"]
    server = subprocess.Popen([entry["command"], *entry["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def ask(message):
        server.stdin.write((json.dumps(message) + "\\n").encode())
        server.stdin.flush()
        return json.loads(server.stdout.readline()) if "id" in message else None
    info = {{"name": "stand-in", "version": "0"}}
    ask({{"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {{"protocolVersion": "2025-11-25", "capabilities": {{}}, "clientInfo": info}}}})
    ask({{"jsonrpc": "2.0", "method": "notifications/initialized"}})
    call = {{"name": "slow_call", "arguments": {{"seconds": 0.2}}}}
    ask({{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}})
    server.stdin.close()
    server.wait(30)
"""


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir()
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"mcpServers": {"users-own": {"type": "stdio", "command": "true"}}}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "claude"
    stand_in.write_text(STAND_IN.format(python=sys.executable))
    stand_in.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env |= {"HOME": str(home), "ANTHROPIC_API_KEY": USERS_KEY, "LAB_STAND_IN_OUT": str(tmp_path / "seen.json")}
    return {"tmp": tmp_path, "claude": stand_in, "env": env, "project": project, "claude_json": claude_json}


def lab(user: dict[str, Any], *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "lab", *args],
        env=user["env"],
        cwd=user["project"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    seen = user["tmp"] / "seen.json"
    return done, json.loads(seen.read_text()) if seen.exists() else {}


def lab_entry(config: dict[str, Any]) -> list[str]:
    entry = config["mcpServers"]["wiretap-lab"]
    return [entry["command"], *entry["args"]]


def test_the_lab_server_is_added_as_wiretap_lab_and_wrapped_like_the_users_own(user) -> None:
    before = user["claude_json"].read_bytes()
    done, seen = lab(user, "-o", str(user["tmp"] / "session"), "--", str(user["claude"]), "-p")
    assert done.returncode == 0, done.stderr
    command = lab_entry(seen["config"])
    assert command[:3] == [sys.executable, "-m", "wiretap"] and command[3] == "tap"
    assert command[command.index("--") + 1 :] == [sys.executable, "-m", "wiretap", "lab", "serve"]
    assert "users-own" in seen["config"]["mcpServers"]
    assert user["claude_json"].read_bytes() == before
    assert seen["env"]["ANTHROPIC_API_KEY"] == USERS_KEY and seen["cwd"] == str(user["project"])
    manifest = json.loads((user["tmp"] / "session" / MANIFEST).read_text())
    assert [s["name"] for s in manifest["servers"]] == ["wiretap-lab", "users-own"]


def test_print_mode_gets_the_prompt_and_the_lab_tools_allowed_and_the_investigation_is_printed(user) -> None:
    done, seen = lab(user, "--conditions", "progress", "--", str(user["claude"]), "-p")
    argv = seen["argv"]
    assert argv[argv.index("-p") + 1] == prompt(walk([BY_NAME["progress"]]))
    assert argv[argv.index("--allowedTools") + 1] == "mcp__wiretap-lab__progress_call,TaskStop"
    assert "paste this prompt" not in done.stderr
    assert done.returncode == 0 and done.stdout == ""
    assert "wiretap lab: no investigation: " in done.stderr and "this session has no recordings" in done.stderr


def test_the_investigation_of_what_the_client_did_is_printed_when_it_exits(user) -> None:
    user["env"]["LAB_STAND_IN_CALL"] = "1"
    done, _ = lab(user, "--conditions", "slow-answer,progress", "--", str(user["claude"]), "-p")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Investigation of session ") and lines[0].endswith(": stand-in 0")
    assert lines[2:4] == ["slow-answer (slow_call)", "  server asked:  seconds 0.2"]
    assert lines[5].startswith("  verdict:       waits at least 0.2")
    assert "Not run in this session: progress." in done.stdout
    assert "- Does it poll at pollIntervalMs?" in done.stdout and "no known rule for stand-in" in done.stdout


def test_a_session_in_the_tui_prints_the_prompt_to_paste_first(user) -> None:
    done, seen = lab(user, "--conditions", "slow-answer", "--", str(user["claude"]))
    assert "wiretap lab: paste this prompt into Claude Code" in done.stderr
    assert "1. slow_call {" in done.stderr
    assert "-p" not in seen["argv"] and "--allowedTools" not in seen["argv"]


def test_scripted_runs_in_a_throwaway_home_with_a_loopback_model_and_nothing_of_the_users(user) -> None:
    before = user["claude_json"].read_bytes()
    done, seen = lab(user, "--scripted", "--", str(user["claude"]))
    assert done.returncode == 0, done.stderr
    env = seen["env"]
    assert env["ANTHROPIC_API_KEY"] == API_KEY and env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    assert USERS_KEY not in json.dumps(seen)
    assert not env["HOME"].startswith(str(user["tmp"])) and Path(seen["cwd"]) != user["project"]
    assert not Path(env["HOME"]).exists(), "the throwaway home is removed afterwards"
    assert "--strict-mcp-config" in seen["argv"] and list(seen["config"]["mcpServers"]) == ["wiretap-lab"]
    assert user["claude_json"].read_bytes() == before


def test_scripted_print_mode_sends_the_prompt_as_stream_json_on_stdin(user) -> None:
    _, seen = lab(user, "--scripted", "--conditions", "poll-interval", "--", str(user["claude"]), "-p", "hi")
    argv = seen["argv"]
    at = argv.index("-p")
    assert argv[at : at + 6] == ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    assert "hi" not in argv
    message = json.loads(seen["stdin"])
    assert message["type"] == "user" and message["message"]["content"].startswith("You are running a protocol")
    assert seen["env"]["CLAUDE_AUTO_BACKGROUND_TASKS"] == "1"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--conditions", "nope", "--", "claude"], "--conditions 'nope': not a lab condition"),
        (["--", "my-client"], "wiretap does not know where 'my-client' keeps its MCP servers"),
    ],
)
def test_bad_input_is_one_line_and_status_2(user, args: list[str], said: str) -> None:
    done, _ = lab(user, *args)
    assert done.returncode == 2
    assert done.stderr.startswith("Error: ") and said in done.stderr and done.stderr.count("\n") == 1


def test_lab_options_before_the_client_route_to_the_run_command_and_subcommands_stay() -> None:
    assert routed(["lab", "--scripted", "--", "claude"]) == ["lab", "run", "--scripted", "--", "claude"]
    assert routed(["lab", "--", "claude"]) == ["lab", "run", "--", "claude"]
    assert routed(["lab", "serve", "--http", "127.0.0.1:0"]) == ["lab", "serve", "--http", "127.0.0.1:0"]
    assert routed(["lab", "report", "s"]) == ["lab", "report", "s"]


def test_the_argv_a_print_run_is_given() -> None:
    steps = walk()
    assert with_prompt(["claude", "-p", "mine"], "ours", steps)[:3] == ["claude", "-p", "mine"]
    assert with_prompt(["claude", "--print", "--verbose"], "ours", steps)[:3] == ["claude", "--print", "ours"]
    scripted = scripted_argv(["claude", "--output-format", "json", "-p", "x", "--model", "m"], steps)
    assert scripted[-2:] == ["--model", "m"] and scripted.count("--output-format") == 1 and "x" not in scripted


def test_scripted_starts_a_client_named_by_a_relative_path_from_the_users_folder(user) -> None:
    done, seen = lab(user, "--scripted", "--conditions", "slow-answer", "--", "../bin/claude", "-p")
    assert done.returncode == 0, done.stderr
    assert seen, "the stand-in ran although the client starts in the throwaway folder"
    assert Path(seen["cwd"]) != user["project"]
