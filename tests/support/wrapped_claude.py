"""Real Claude Code wrapped by ``wiretap --``: print mode and the TUI in tmux, the watched fake Messages API,
and the processes and temporary configs a run leaves."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios.fake_messages_api import Captured, FakeMessagesAPI, ToolUse

from support.claude import ClaudeRun, offline_env, parse_stream_json
from support.eventually import eventually
from support.taprun import settled_read_all
from wiretap.recording.events import Event

Json = dict[str, Any]

WIRETAP = [sys.executable, "-m", "wiretap"]

CLAUDE_TIMEOUT = 120

TEMP_CONFIG = "wiretap-mcp-*.json"

PRINT_MODE = ["--output-format", "stream-json", "--verbose", "--no-session-persistence"]

# Runs a command (wiretap, or Claude Code straight) as its only child, as a child subreaper: when the
# command exits, every process still running below it has become our child. Writes {"returncode",
# "left": [{"pid", "cmdline"}]} to its first argument, kills what was left, and exits as the command did.
REAPER = r"""
import ctypes, json, os, signal, subprocess, sys, time
report, argv = sys.argv[1], sys.argv[2:]
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
for signum in (signal.SIGINT, signal.SIGQUIT):  # a terminal's keys are for the command (reset at exec)
    signal.signal(signum, lambda *_: None)

def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return

def children():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state, ppid = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[:2]
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if int(ppid) == os.getpid() and state != "Z":
            found.append({"pid": int(entry), "cmdline": cmdline.strip()})
    return found

returncode = subprocess.Popen(argv).wait()
reap()
left = children()
with open(report, "w") as f:
    json.dump({"returncode": returncode, "left": left}, f)
deadline = time.monotonic() + 10
while left and time.monotonic() < deadline:
    for process in left:
        try:
            os.kill(process["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.05)
    reap()
    left = children()
os._exit(returncode if returncode >= 0 else 128 - returncode)
"""


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def processes_mentioning(text: str) -> list[list[str]]:
    """The command lines of live processes that mention ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            argv = cmdline(int(entry.name))
            if any(text in arg for arg in argv) and running(int(entry.name)):
                found.append(argv)
    return found


def children_of(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def descendants_of(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children_of(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class TempConfig:
    """A generated config, as seen in $TMPDIR while Claude Code was running."""

    path: Path
    mode: int
    content: Json
    readers: list[list[str]]
    """The command lines of the processes that named it (Claude Code's own)."""


class WatchedAPI(FakeMessagesAPI):
    """The fake Messages API, taking a look around (``watch``) at every request, while Claude Code waits."""

    def __init__(self, script: Sequence[ToolUse], watch: Callable[[], Any]) -> None:
        super().__init__(script)
        self.watch = watch
        self.seen: list[Any] = []

    def capture(self, request: Captured) -> None:
        super().capture(request)
        self.seen.append(self.watch())


def temp_configs(folder: Path) -> list[TempConfig]:
    found = []
    for path in sorted(folder.glob(TEMP_CONFIG)):
        with contextlib.suppress(OSError, ValueError):
            found.append(
                TempConfig(
                    path, path.stat().st_mode & 0o777, json.loads(path.read_text()), processes_mentioning(str(path))
                )
            )
    return found


@dataclass
class Run:
    claude: ClaudeRun
    """What Claude Code printed (with wiretap's own lines, when wrapped), and the command's exit status."""
    requests: list[Json]
    """Every Messages API request body, in order."""
    tool_results: list[Json]
    left: list[Json]
    """Processes still running when the command ended (wiretap, or Claude Code when straight)."""
    watched: list[list[TempConfig]]
    """The generated configs in $TMPDIR at each Messages API request."""
    tmpdir: Path


def run_claude_code(
    argv: list[str],
    *,
    root: Path,
    cwd: Path,
    script: Sequence[ToolUse],
    env: dict[str, str] | None = None,
    while_running: Callable[[FakeMessagesAPI, int], None] | None = None,
    timeout: float = CLAUDE_TIMEOUT,
    api_class: type[FakeMessagesAPI] = FakeMessagesAPI,
) -> Run:
    """Run ``argv`` (Claude Code, or wiretap in front of it) under the reaper, against a fake API (``api_class``'s
    answers).

    ``while_running(api, pid)`` is called once the process runs; ``pid`` is the command's (not the reaper's).
    """
    tmpdir = root / "tmp"
    tmpdir.mkdir(exist_ok=True)
    report = root / f"reaper-{time.monotonic_ns()}.json"
    watched_api = type("Watched", (WatchedAPI, api_class), {})
    with watched_api(script, lambda: temp_configs(tmpdir)) as api:
        full_env = offline_env(root, api.url) | {"TMPDIR": str(tmpdir)} | (env or {})
        with subprocess.Popen(
            [sys.executable, "-c", REAPER, str(report), *argv],
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as proc:
            try:
                if while_running is not None:
                    eventually(lambda: bool(children_of(proc.pid)), "the command did not start", 10)
                    while_running(api, children_of(proc.pid)[0])
                stdout, stderr = proc.communicate(timeout=timeout)
            except BaseException as exc:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                stdout, stderr = proc.communicate()
                raise AssertionError(
                    f"{argv} did not finish\nstdout:\n{stdout[-4000:]}\nstderr:\n{stderr[-4000:]}"
                ) from exc
        requests = [r.body or {} for r in api.messages_requests()]
        tool_results = api.tool_results()
        watched = api.seen
    reaped = json.loads(report.read_text())
    claude = ClaudeRun(argv, reaped["returncode"], parse_stream_json(stdout), stdout, stderr)
    return Run(claude, requests, tool_results, reaped["left"], watched, tmpdir)


def approve_project_servers(root: Path) -> None:
    """What a user does once for a project's .mcp.json (PEERS.md: the project settings are not enough)."""
    settings = root / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}, indent=2) + "\n")


def wrapped(argv: list[str], *options: str) -> list[str]:
    return [*WIRETAP, *options, "--", *argv]


@dataclass
class Recording:
    path: Path
    header: Event
    events: list[Event]

    @classmethod
    def read(cls, path: Path) -> Recording:
        header, events, skipped = settled_read_all(path)
        assert not skipped, skipped.describe()
        return cls(path, header, events)

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]

    def messages(self) -> list[Event]:
        return self.of_kind("message")

    def requests(self, method: str) -> list[Event]:
        return [e for e in self.messages() if e["dir"] == "c2s" and e["msg"].get("method") == method]

    def answer(self, request: Event) -> Event:
        answers = [
            e
            for e in self.messages()
            if e["dir"] == "s2c" and "method" not in e["msg"] and e["msg"].get("id") == request["msg"]["id"]
        ]
        assert len(answers) == 1, f"expected one answer to {request['msg']}, got {answers}"
        return answers[0]

    def index(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)


@dataclass
class Session:
    folder: Path
    manifest: Json
    recordings: dict[str, Recording] = field(default_factory=dict)

    @classmethod
    def read(cls, folder: Path) -> Session:
        manifest = json.loads((folder / "manifest.json").read_text())
        recordings = {
            s["name"]: Recording.read(folder / s["recording"])
            for s in manifest["servers"]
            if (folder / s["recording"]).exists()
        }
        return cls(folder, manifest, recordings)

    def server(self, name: str) -> Json:
        return next(s for s in self.manifest["servers"] if s["name"] == name)


def summary_folder(stderr: str) -> Path:
    found = re.findall(r"^wiretap: session (.+)$", stderr, re.MULTILINE)
    assert len(found) == 1, stderr
    return Path(found[0])


PROMPT_MARK = "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT}"  # Claude Code's input prompt


def has_answer(recording: Path, method: str) -> bool:
    """Whether a recording being written holds an answer to a ``method`` request yet."""
    asked, answers = set(), set()
    with contextlib.suppress(FileNotFoundError):
        for line in recording.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError, AttributeError):
                event = json.loads(line)
                if event.get("kind") == "message" and event["dir"] == "c2s" and event["msg"].get("method") == method:
                    asked.add(json.dumps(event["msg"].get("id")))
                elif event.get("kind") == "message" and event["dir"] == "s2c" and "method" not in event["msg"]:
                    answers.add(json.dumps(event["msg"].get("id")))
    return bool(asked & answers)


class Tmux:
    def __init__(self, socket: Path, env: dict[str, str]) -> None:
        self.socket, self.env = socket, env

    def __call__(self, *args: str, cwd: Path | None = None) -> str:
        result = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            cwd=cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=15,
        )
        assert result.returncode == 0, f"tmux {args}: {result.stderr}"
        return result.stdout

    def screen(self, *, joined: bool = False) -> str:
        """The visible pane; ``joined``: with the lines the terminal wrapped joined again."""
        return self("capture-pane", "-p", *(["-J"] if joined else []), "-t", "main")

    def wait_for(self, text: str, timeout: float = 60) -> str:
        eventually(lambda: text in self.screen(), f"{text!r} on the screen", timeout, self.screen)
        return self.screen()

    def pane(self, field_: str) -> str:
        return self("display-message", "-p", "-t", "main", f"#{{{field_}}}").strip()

    def kill_everything(self) -> None:
        """Whatever still runs in the pane, then the tmux server."""
        with contextlib.suppress(AssertionError, subprocess.SubprocessError, ValueError):
            if self.pane("pane_dead") != "1":
                pid = int(self.pane("pane_pid"))
                for process in [pid, *descendants_of(pid)]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process, signal.SIGKILL)
        with contextlib.suppress(subprocess.SubprocessError):
            subprocess.run(
                ["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=15, env=self.env
            )
