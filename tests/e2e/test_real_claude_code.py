"""The real Claude Code (2.1.332, offline) calling an MCP stdio server through ``wiretap tap``.

Each run is ``claude -p`` against a fake Messages API that makes the model call one MCP tool. The
same scenario runs once straight to the server and once through the tap; what the model saw, what
Claude Code answered, the recording and the processes left behind are compared.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse, tool_use_id
from support.claude import ClaudeRun, offline_env, run_claude, stdio_server, write_mcp_config
from support.taprun import settled_read_all

from wiretap.recording.events import Event

pytestmark = pytest.mark.slow

SERVER = "demo"
TOOL = f"mcp__{SERVER}__echo"
ARGUMENTS = {"text": 'héllo ✓ wire — 1 < 2 & "quoted"\tand\\slash'}
DEMO_SERVER = [sys.executable, "-m", "wiretap.demo.server"]
HANDSHAKES = {"server/discover", "initialize"}
# Claude Code sends SIGTERM 100 ms after SIGINT (PEERS.md); allow for a loaded machine.
SIGTERM_AFTER_SIGINT = (0.08, 0.6)


def server_ignoring(*signals: str) -> list[str]:
    """The demo server, with ``signals`` ignored: a server slow to shut down."""
    code = (
        "import runpy, signal\n"
        f"for name in {list(signals)!r}:\n"
        "    signal.signal(getattr(signal, name), signal.SIG_IGN)\n"
        "runpy.run_module('wiretap.demo.server', run_name='__main__')\n"
    )
    return [sys.executable, "-c", code]


def running(pid: int, marker: str | None = None) -> bool:
    """Whether ``pid`` is a live (not zombie) process, whose command line holds ``marker`` if given."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z" and (marker is None or marker in cmdline)


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid() and running(int(entry.name), text):
            found.append(int(entry.name))
    return found


@dataclass
class Session:
    """One ``claude -p`` run that called TOOL, and what it left behind."""

    run: ClaudeRun
    tool_results: list[dict[str, Any]]
    recording: Path | None = None
    header: Event = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    left_running: dict[str, list[int]] = field(default_factory=dict)
    """Processes still running the moment claude exited: the server, and taps of this recording."""

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]

    def messages(self) -> list[Event]:
        return self.of_kind("message")

    def index(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)


def claude_session(claude: Path, root: Path, server_argv: list[str], *, tapped: bool) -> Session:
    """Claude Code calls TOOL of ``server_argv``, run straight or through ``wiretap tap``."""
    root.mkdir(parents=True, exist_ok=True)
    recording = root / "recording.jsonl"
    if tapped:
        entry = stdio_server(sys.executable, ["-m", "wiretap", "tap", "--out", str(recording), "--", *server_argv])
    else:
        entry = stdio_server(server_argv[0], server_argv[1:])
    config = write_mcp_config(root / "mcp.json", {SERVER: entry})
    with FakeMessagesAPI([ToolUse(TOOL, ARGUMENTS)]) as api:
        run = run_claude(
            claude,
            "Call the echo tool.",
            env=offline_env(root, api.url),
            cwd=root,
            mcp_config=config,
            allowed_tools=[TOOL],
            timeout=120,
        )
        session = Session(run, api.tool_results())
        if tapped:
            session.left_running["taps"] = processes_mentioning(str(recording))
            session.recording = recording
            session.header, session.events, skipped = settled_read_all(recording)
            assert not skipped, skipped.describe()
            spawned = session.of_kind("spawn")[0]["pid"]
            session.left_running["server"] = [spawned] if running(spawned) else []
    assert run.returncode == 0, run.describe()
    assert run.mcp_status(SERVER) == "connected", run.describe()
    return session


@dataclass
class Pair:
    direct: Session
    tapped: Session


@pytest.fixture(scope="module")
def echo(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """The echo scenario run straight to the demo server, then through the tap."""
    root = tmp_path_factory.mktemp("claude-echo")
    direct = claude_session(claude_code_bin, root / "direct", DEMO_SERVER, tapped=False)
    tapped = claude_session(claude_code_bin, root / "tapped", DEMO_SERVER, tapped=True)
    return Pair(direct, tapped)


def request(session: Session, method: str) -> Event:
    return next(e for e in session.messages() if e["dir"] == "c2s" and e["msg"].get("method") == method)


def response_to(session: Session, call: Event) -> Event:
    """The server's one answer to the request ``call``."""
    answers = [
        e
        for e in session.messages()
        if e["dir"] == "s2c" and "method" not in e["msg"] and e["msg"].get("id") == call["msg"]["id"]
    ]
    assert len(answers) == 1, f"expected one answer to {call['msg']}, got {answers}"
    return answers[0]


# The echo scenario.


def test_the_tool_result_reaches_the_model_unchanged_through_the_tap(echo: Pair) -> None:
    assert len(echo.tapped.tool_results) == 1
    assert echo.tapped.tool_results == echo.direct.tool_results
    returned = response_to(echo.tapped, request(echo.tapped, "tools/call"))["msg"]["result"]
    assert echo.tapped.tool_results[0]["content"] == returned["content"]
    assert returned["content"] == [{"type": "text", "text": ARGUMENTS["text"]}]
    assert not echo.tapped.tool_results[0].get("is_error")


def test_claude_codes_final_answer_is_the_same_with_and_without_the_tap(echo: Pair) -> None:
    assert echo.tapped.run.result["subtype"] == "success"
    assert echo.tapped.run.result_text == echo.direct.run.result_text
    assert json.dumps(ARGUMENTS["text"], ensure_ascii=False) in echo.tapped.run.result_text


def test_the_recording_holds_handshake_tool_list_and_tool_call_each_answered_in_order(echo: Pair) -> None:
    session = echo.tapped
    first = session.messages()[0]
    assert first["dir"] == "c2s" and first["msg"]["method"] in HANDSHAKES
    steps = [first, request(session, "tools/list"), request(session, "tools/call")]
    pairs = [(call, response_to(session, call)) for call in steps]
    assert all("result" in answer["msg"] for _, answer in pairs), pairs
    recorded = [(e["dir"], e["msg"].get("method"), e["msg"].get("id"), e["t"]) for pair in pairs for e in pair]
    order = [session.index(e) for pair in pairs for e in pair]
    assert order == sorted(order), f"recorded out of order: {recorded}"
    assert any(tool["name"] == "echo" for tool in response_to(session, steps[1])["msg"]["result"]["tools"])


def test_the_recorded_tool_call_is_the_one_the_model_asked_for(echo: Pair) -> None:
    params = request(echo.tapped, "tools/call")["msg"]["params"]
    assert params["name"] == "echo"
    assert params["arguments"] == ARGUMENTS
    assert params["_meta"]["claudecode/toolUseId"] == tool_use_id(0)
    assert len([m for m in echo.tapped.messages() if m["msg"].get("method") == "tools/call"]) == 1


def test_the_recording_holds_claude_codes_sigint_and_the_servers_exit(echo: Pair) -> None:
    session = echo.tapped
    signals = session.of_kind("signal")
    assert signals, "no signal recorded: Claude Code did not signal the tap"
    assert signals[0]["signal"] == "SIGINT" and signals[0]["forwarded"] is True
    assert [s["signal"] for s in signals] in (["SIGINT"], ["SIGINT", "SIGTERM"])
    answered = response_to(session, request(session, "tools/call"))
    assert session.index(answered) < session.index(signals[0])
    # Claude Code signals first: it does not close the server's stdin before.
    assert not any(e["dir"] == "c2s" for e in session.of_kind("eof") if session.index(e) < session.index(signals[0]))
    [exit_event] = session.of_kind("exit")
    assert session.index(exit_event) > session.index(signals[0])
    delivered = [s for s in signals if s["forwarded"] and session.index(s) < session.index(exit_event)]
    assert exit_event["signal"] == delivered[-1]["signal"]
    assert exit_event["status"] == 128 + exit_event["signum"]
    assert session.events[-1]["kind"] == "end"


def test_no_server_or_tap_process_outlives_claude_code(echo: Pair) -> None:
    assert echo.tapped.left_running == {"taps": [], "server": []}


# Servers slow to shut down: Claude Code escalates, and the tap must pass it on.


def test_a_server_ignoring_sigint_is_ended_by_the_sigterm_claude_code_sends_through_the_tap(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    session = claude_session(claude_code_bin, tmp_path, server_ignoring("SIGINT"), tapped=True)
    sigint, sigterm = session.of_kind("signal")
    assert (sigint["signal"], sigterm["signal"]) == ("SIGINT", "SIGTERM")
    assert sigint["forwarded"] and sigterm["forwarded"]
    low, high = SIGTERM_AFTER_SIGINT
    assert low <= sigterm["t"] - sigint["t"] <= high
    [exit_event] = session.of_kind("exit")
    assert (exit_event["signal"], exit_event["status"]) == ("SIGTERM", 143)
    assert session.events[-1]["kind"] == "end"
    assert session.tool_results[0]["content"] == [{"type": "text", "text": ARGUMENTS["text"]}]
    assert session.left_running == {"taps": [], "server": []}


def test_a_server_ignoring_sigint_and_sigterm_goes_with_the_tap_claude_code_kills(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    session = claude_session(claude_code_bin, tmp_path, server_ignoring("SIGINT", "SIGTERM"), tapped=True)
    assert [(s["signal"], s["forwarded"]) for s in session.of_kind("signal")] == [
        ("SIGINT", True),
        ("SIGTERM", True),
    ]
    # Everything up to the kill is on disk, though the tap had no chance to record an exit.
    assert response_to(session, request(session, "tools/call"))["msg"]["result"]["content"][0]["type"] == "text"
    assert session.tool_results[0]["content"] == [{"type": "text", "text": ARGUMENTS["text"]}]
    assert session.left_running == {"taps": [], "server": []}
