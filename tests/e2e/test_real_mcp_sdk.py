"""The real MCP Python SDK 2.3.0, client and server, over stdio through ``wiretap tap``, in both eras.

The client and server scripts in peer_scripts/ run in the SDK's own venv. The server tees its stdin
and stdout into wire logs byte for byte, so a recording is checked against what the server itself
read and wrote. Each era runs once straight to the server and once through the tap:

- modern: ``mcp.Client(mode="auto")`` probes ``server/discover``, and the server's dual-era loop
  (``Server.run``) answers as a 2026-07-28 server.
- legacy: ``mcp.Client(mode="legacy")`` opens with ``initialize`` to the same server.
- legacy-server: ``mode="auto"`` against a server that serves the handshake only
  (``mcp.server.runner.serve_loop``): the probe gets -32601 and the client falls back to ``initialize``.

At shutdown the 2.3.0 stdio client closes the server's stdin, waits up to 2 s for it to exit, then
SIGTERMs its process group, and SIGKILLs the group 2 s after that (mcp/client/stdio.py).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.taprun import settled_read_all

from wiretap.recording.events import Event

pytestmark = pytest.mark.slow

PEER_SCRIPTS = paths.PEER_SCRIPTS
TAP = [sys.executable, "-m", "wiretap", "tap"]
TOOL_CALLS = ["add", "big_text", "shout_to_stderr", "count", "fail"]
STDERR_LINE = "sdk-peer stderr: hello"
MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
# mcp/client/stdio.py: PROCESS_TERMINATION_TIMEOUT, then FORCE_KILL_TIMEOUT.
GRACE_AFTER_STDIN_CLOSE = 2.0
KILL_AFTER_SIGTERM = 2.0
TIMEOUT = 60


@dataclass(frozen=True)
class Era:
    client_mode: str
    server_era: str
    protocol_version: str
    opening: list[str]
    """The client's messages before ``tools/list``."""


ERAS = {
    "modern": Era("auto", "both", "2026-07-28", ["server/discover"]),
    "legacy": Era("legacy", "both", "2025-11-25", ["initialize", "notifications/initialized"]),
    "legacy-server": Era(
        "auto", "legacy", "2025-11-25", ["server/discover", "initialize", "notifications/initialized"]
    ),
}


def ended(pid: int, within: float = 0.0) -> bool:
    """Whether process ``pid`` has ended (a zombie has), waiting up to ``within`` seconds for it to."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within)[0])
    finally:
        os.close(fd)


def frames(wire: bytes) -> list[bytes]:
    """The newline-delimited frames of a wire log, each of which must end with a newline."""
    *lines, rest = wire.split(b"\n")
    assert rest == b"", f"a frame without its newline: {rest[:200]!r}"
    return lines


@dataclass
class Run:
    """One run of the SDK client, straight to the server or through the tap, and what it left."""

    client: subprocess.CompletedProcess[str]
    seconds: float
    server_argv: list[str]
    wire_in: bytes
    """What the server read from its stdin."""
    wire_out: bytes
    """What the server wrote to its stdout."""
    header: Event = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    left_running: list[int] = field(default_factory=list)
    """The tap and server processes still running once the client had exited."""

    @property
    def report(self) -> dict[str, Any]:
        assert self.client.returncode == 0, self.describe()
        report: dict[str, Any] = json.loads(self.client.stdout)
        return report

    def describe(self) -> str:
        return f"client exited {self.client.returncode}; its stderr:\n{self.client.stderr[-4000:]}"

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]

    def messages(self, direction: str | None = None) -> list[Event]:
        return [e for e in self.of_kind("message") if direction is None or e["dir"] == direction]

    def index(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)


def run_sdk_client(
    python: Path, root: Path, era: Era, *, tapped: bool, server_flags: tuple[str, ...] = (), reap: float = 0.0
) -> Run:
    """Run the SDK client against the SDK server, through the tap if ``tapped``.

    A tap or server still running ``reap`` seconds after the client exited is ``left_running``.
    """
    root.mkdir(parents=True, exist_ok=True)
    wire = root / "wire"
    server = [str(python), str(PEER_SCRIPTS / "mcp_sdk_server.py"), "--wire-log", str(wire)]
    server += ["--era", era.server_era, *server_flags]
    recording = root / "recording.jsonl"
    command = [*TAP, "--out", str(recording), "--", *server] if tapped else server
    client = [str(python), str(PEER_SCRIPTS / "mcp_sdk_client.py"), era.client_mode, "--", *command]
    started = time.monotonic()
    result = subprocess.run(client, cwd=root, capture_output=True, text=True, timeout=TIMEOUT)
    seconds = time.monotonic() - started
    logs = [Path(f"{wire}.{end}") for end in ("in", "out")]
    run = Run(result, seconds, server, *(log.read_bytes() if log.exists() else b"" for log in logs))
    assert logs[0].exists(), f"the server never started: {run.describe()}"
    if tapped:
        run.header, run.events, skipped = settled_read_all(recording)
        assert not skipped, skipped.describe()
        pids = [run.header["pid"], *(e["pid"] for e in run.of_kind("spawn"))]
        run.left_running = [pid for pid in pids if not ended(pid, reap)]
    return run


@dataclass
class Pair:
    era: Era
    direct: Run
    tapped: Run


@pytest.fixture(scope="module", params=list(ERAS))
def sdk(request: pytest.FixtureRequest, mcp_sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """The SDK client and server of one era, run straight, then through the tap."""
    era = ERAS[request.param]
    root = tmp_path_factory.mktemp(f"mcp-sdk-{request.param}")
    direct = run_sdk_client(mcp_sdk_python, root / "direct", era, tapped=False)
    tapped = run_sdk_client(mcp_sdk_python, root / "tapped", era, tapped=True)
    return Pair(era, direct, tapped)


def test_the_sdk_client_gets_the_same_results_through_the_tap(sdk: Pair) -> None:
    for run in (sdk.direct, sdk.tapped):
        assert run.client.returncode == 0, run.describe()
        assert "Traceback" not in run.client.stderr, run.describe()
        assert STDERR_LINE in run.client.stderr.splitlines(), run.describe()
    assert sdk.tapped.report == sdk.direct.report
    report = sdk.tapped.report
    assert report["protocol_version"] == sdk.era.protocol_version
    assert report["server_info"]["name"] == "wiretap-sdk-peer"
    assert sorted(tool["name"] for tool in report["tools"]) == sorted(TOOL_CALLS)
    calls = report["calls"]
    assert calls["add"]["structuredContent"] == {"result": 42}
    assert len(calls["big_text"]["content"][0]["text"].splitlines()) == 2000
    assert calls["fail"]["isError"] is True
    assert not any(calls[name]["isError"] for name in TOOL_CALLS if name != "fail")
    assert report["progress"] == [[i, 3, f"step {i}"] for i in (1, 2, 3)]


def test_the_sdk_server_reads_and_writes_the_same_bytes_with_and_without_the_tap(sdk: Pair) -> None:
    assert sdk.tapped.wire_in == sdk.direct.wire_in
    assert sdk.tapped.wire_out == sdk.direct.wire_out


def test_the_recording_holds_every_message_the_sdk_server_read_and_wrote_in_order(sdk: Pair) -> None:
    run = sdk.tapped
    for direction, wire in (("c2s", run.wire_in), ("s2c", run.wire_out)):
        recorded = run.messages(direction)
        assert [e for e in recorded if "msg" not in e or "raw" in e or "eol" in e] == []
        assert [(e["size"], e["msg"]) for e in recorded] == [(len(f), json.loads(f)) for f in frames(wire)]
    # The big_text result is larger than one pipe read.
    assert max(e["size"] for e in run.messages("s2c")) > 1 << 16
    assert [e["text"] for e in run.of_kind("stderr") if "sdk-peer" in e["text"]] == [STDERR_LINE]
    assert [e["t"] for e in run.events] == sorted(e["t"] for e in run.events)


def test_the_recording_shows_the_eras_handshake_and_one_response_per_request(sdk: Pair) -> None:
    c2s = [e["msg"] for e in sdk.tapped.messages("c2s")]
    s2c = [e["msg"] for e in sdk.tapped.messages("s2c")]
    assert [m["method"] for m in c2s] == [*sdk.era.opening, "tools/list", *["tools/call"] * len(TOOL_CALLS)]
    assert [m["params"]["name"] for m in c2s if m["method"] == "tools/call"] == TOOL_CALLS
    requests = [m for m in c2s if "id" in m]
    responses = [m for m in s2c if "method" not in m]
    # One answer per request, in the order asked (the SDK client awaits each one before the next).
    assert [m["id"] for m in responses] == [m["id"] for m in requests]
    assert len({m["id"] for m in requests}) == len(requests)
    assert all(("result" in m) != ("error" in m) for m in responses)
    [count] = [m for m in c2s if m.get("params", {}).get("name") == "count"]
    token = count["params"]["_meta"]["progressToken"]
    progress = [{"progressToken": token, "progress": i, "total": 3, "message": f"step {i}"} for i in (1, 2, 3)]
    assert [m for m in s2c if "method" in m] == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": p} for p in progress
    ]
    answers = {m["id"]: m for m in responses}
    enveloped = [m for m in requests if MODERN_VERSION_KEY in m.get("params", {}).get("_meta", {})]
    probe = [m for m in requests if m["method"] == "server/discover"]
    if sdk.era.protocol_version == "2026-07-28":
        assert enveloped == requests
        assert "2026-07-28" in answers[probe[0]["id"]]["result"]["supportedVersions"]
        return
    [initialize] = [m for m in requests if m["method"] == "initialize"]
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert answers[initialize["id"]]["result"]["protocolVersion"] == "2025-11-25"
    # Only the auto client's probe carries the 2026 envelope; a handshake-only server refuses it.
    assert enveloped == probe
    assert [answers[m["id"]]["error"]["code"] for m in probe] == [-32601] * len(probe)


def test_the_recording_shows_the_sdk_client_closing_stdin_and_the_server_exiting_by_itself(sdk: Pair) -> None:
    run = sdk.tapped
    assert run.header["argv"] == run.server_argv
    spawn = run.events[0]
    assert (spawn["kind"], spawn["argv"]) == ("spawn", run.server_argv)
    kinds = {e["kind"] for e in run.events}
    assert not kinds & {"signal", "error", "spawn_failed"}, run.events
    [stdin_closed] = [e for e in run.of_kind("eof") if e["dir"] == "c2s"]
    [stdout_closed] = [e for e in run.of_kind("eof") if e["dir"] == "s2c"]
    assert run.index(stdin_closed) > run.index(run.messages("c2s")[-1])
    assert run.index(stdout_closed) > run.index(run.messages("s2c")[-1])
    [exit_event] = run.of_kind("exit")
    assert (exit_event["code"], exit_event["status"]) == (0, 0)
    assert run.index(exit_event) > run.index(stdin_closed)
    assert exit_event["t"] - stdin_closed["t"] < GRACE_AFTER_STDIN_CLOSE
    assert run.events[-1]["kind"] == "end" and run.events[-1]["lost"] == 0


def test_no_tap_or_server_process_is_left_once_the_sdk_client_has_finished(sdk: Pair) -> None:
    assert sdk.tapped.left_running == []


def test_each_response_is_recorded_after_its_request_and_before_the_clients_next_message(sdk: Pair) -> None:
    messages = sdk.tapped.messages()
    out_of_order = []
    for i, event in enumerate(messages):
        if event["dir"] != "c2s" or "id" not in event["msg"]:
            continue
        answer = next(
            j
            for j, e in enumerate(messages)
            if e["dir"] == "s2c" and "method" not in e["msg"] and e["msg"]["id"] == event["msg"]["id"]
        )
        following = next((j for j in range(i + 1, len(messages)) if messages[j]["dir"] == "c2s"), len(messages))
        if not i < answer < following:
            out_of_order.append((event["msg"]["method"], event["msg"]["id"], i, answer, following))
    assert out_of_order == []


def test_the_sdk_client_sends_sigterm_2_s_after_closing_stdin_and_the_tap_forwards_it(
    mcp_sdk_python: Path, tmp_path: Path
) -> None:
    run = run_sdk_client(mcp_sdk_python, tmp_path, ERAS["modern"], tapped=True, server_flags=("--linger",))
    assert run.report["calls"]["add"]["structuredContent"] == {"result": 42}
    [stdin_closed] = [e for e in run.of_kind("eof") if e["dir"] == "c2s"]
    [sigterm] = run.of_kind("signal")
    assert (sigterm["signal"], sigterm["forwarded"]) == ("SIGTERM", True)
    assert run.index(sigterm) > run.index(stdin_closed)
    waited = sigterm["t"] - stdin_closed["t"]
    assert GRACE_AFTER_STDIN_CLOSE - 0.1 <= waited < GRACE_AFTER_STDIN_CLOSE + KILL_AFTER_SIGTERM
    [exit_event] = run.of_kind("exit")
    assert (exit_event["signal"], exit_event["status"]) == ("SIGTERM", 143)
    assert run.index(exit_event) > run.index(sigterm)
    assert run.events[-1]["kind"] == "end"
    assert run.left_running == []


def test_a_server_ignoring_sigterm_is_gone_once_the_sdk_client_has_killed_the_tap(
    mcp_sdk_python: Path, tmp_path: Path
) -> None:
    flags = ("--linger", "--ignore-sigterm")
    run = run_sdk_client(mcp_sdk_python, tmp_path, ERAS["modern"], tapped=True, server_flags=flags, reap=5.0)
    assert run.report["calls"]["add"]["structuredContent"] == {"result": 42}
    assert run.seconds > GRACE_AFTER_STDIN_CLOSE + KILL_AFTER_SIGTERM
    assert [(s["signal"], s["forwarded"]) for s in run.of_kind("signal")] == [("SIGTERM", True)]
    # SIGKILL left the tap no time to record the exit; everything before it is on disk.
    assert not run.of_kind("exit")
    assert len(run.messages("c2s")) == len(frames(run.wire_in))
    assert len(run.messages("s2c")) == len(frames(run.wire_out))
    assert run.left_running == []
