"""``wiretap lab -- CLIENT``: the client run as ``wiretap -- CLIENT`` does, with the lab's probe server added
to its generated config (recorded like any other server), a prompt that walks the model through the
conditions, and the investigation printed at the end.

With ``scripted``, the client talks to a loopback fake model that plays the walk, in a throwaway home and
project folder: the user's config, project files and credentials are neither read nor written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from wiretap.errors import BadInput
from wiretap.lab.conditions import Condition
from wiretap.lab.script import SERVER, Step, model_tool, prompt, walk
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.wrap.clients.servers import Server
from wiretap.wrap.session import Session

PRINT = ("-p", "--print")
QUIET = 3.0
"""Seconds without new traffic to the lab server, once the script is done, before a scripted ``-p`` run's
stdin is closed (the client then ends its turn)."""
LONGEST = 30.0
"""Seconds after the script is done at most before that stdin is closed anyway (a client that keeps asking
for a forgotten task would otherwise keep the run going)."""
STREAM_JSON = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
"""What lets ``claude -p`` run MCP tasks: its input as stream-json, kept open while the tasks run."""


def lab_server() -> Server:
    """The probe, started by the same interpreter as this wiretap."""
    entry = {"type": "stdio", "command": sys.executable, "args": ["-m", "wiretap", "lab", "serve"]}
    return Server(SERVER, "wiretap lab", entry, raw=dict(entry))


def print_mode(argv: Sequence[str]) -> bool:
    return any(arg in PRINT for arg in argv[1:])


def _without(argv: Sequence[str], options: Sequence[str], with_value: bool) -> list[str]:
    rest: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in options:
            skip = with_value
        elif not any(arg.startswith(f"{o}=") for o in options):
            rest.append(arg)
    return rest


def allowed(steps: Sequence[Step]) -> list[str]:
    return ["--allowedTools", ",".join([*(model_tool(s) for s in steps), "TaskStop"])]


def with_prompt(argv: Sequence[str], text: str, steps: Sequence[Step]) -> list[str]:
    """``claude -p`` with the lab's prompt as its prompt (unless the user gave one) and the lab's tools allowed."""
    out = list(argv)
    at = next(n for n, arg in enumerate(out) if arg in PRINT)
    if at + 1 >= len(out) or out[at + 1].startswith("-"):
        out.insert(at + 1, text)
    return [*out, *allowed(steps)]


def scripted_argv(argv: Sequence[str], steps: Sequence[Step]) -> list[str]:
    """A scripted ``claude -p``: stream-json in and out (the prompt comes on stdin), the lab's tools allowed,
    and only the generated config's servers."""
    rest = _without(argv[1:], ["--input-format", "--output-format"], True)
    at = next((n for n, arg in enumerate(rest) if arg in PRINT), None)
    if at is not None:
        prompt_given = at + 1 < len(rest) and not rest[at + 1].startswith("-")
        del rest[at : at + (2 if prompt_given else 1)]
    rest = [arg for arg in rest if arg != "--verbose"]
    return [argv[0], "-p", *STREAM_JSON, *allowed(steps), "--strict-mcp-config", *rest]


def feed_until_quiet(text: str, done: Callable[[], bool], recording: Path) -> Callable[[subprocess.Popen[bytes]], None]:
    """The stdin of a scripted ``-p`` run: the prompt as one stream-json user message, kept open until the
    script is done and the lab server has had no traffic for ``QUIET`` s."""
    line = json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"

    def feed(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.write(line.encode())
            proc.stdin.flush()
        finished: float | None = None
        size, changed = -1, time.monotonic()
        while proc.poll() is None:
            now = time.monotonic()
            try:
                current = recording.stat().st_size
            except OSError:
                current = -1
            if current != size:
                size, changed = current, now
            if finished is None and done():
                finished = now
            if finished is not None and (now - changed >= QUIET or now - finished >= LONGEST):
                break
            time.sleep(0.2)
        with contextlib.suppress(OSError):
            proc.stdin.close()

    return feed


def without_stops(steps: Sequence[Step], *, chosen: bool, say: Callable[[str], None]) -> list[Step]:
    """The walk for a client with no TaskStop (and no tasks: its calls are answered inline). A task that runs
    until it is stopped would hold its call until the client's own timeout: left out unless asked for."""
    kept = [s for s in steps if not s.stop and (chosen or s.condition.name != "until-cancelled")]
    if len(kept) < len(steps):
        say("wiretap lab: left out for this client: a task stopped with TaskStop (Claude Code's tool)"
            + ("" if chosen else ", and one left running (--conditions until-cancelled to run it)"))  # fmt: skip
    return kept


def run_lab(
    argv: list[str],
    *,
    conditions: Sequence[Condition] | None,
    scripted: bool,
    out: Path | None,
    env: Mapping[str, str],
    max_size: int = DEFAULT_MAX_SIZE,
    say: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True),
) -> tuple[int, Path]:
    """Run the client through the lab; the client's exit status and the session folder."""
    from wiretap.wrap.clients import client_for

    steps = walk(conditions)
    client = client_for(argv[0])
    claude = client.NAME == "Claude Code"
    if scripted and not claude:
        steps = without_stops(steps, chosen=conditions is not None, say=say)
    text = prompt(steps)
    headless = print_mode(argv) or (scripted and not claude)
    with contextlib.ExitStack() as stack:
        cwd, client_env, api = Path.cwd(), dict(env), None
        if scripted and os.sep in argv[0] and not os.path.isabs(argv[0]):  # it starts in the throwaway folder
            argv = [os.path.abspath(argv[0]), *argv[1:]]
        if scripted and not claude:
            from wiretap.lab.model_apis import Call, FakeModelAPIs
            from wiretap.lab.offline_clients import codex_argv, codex_env, gemini_argv, gemini_env

            root = Path(tempfile.mkdtemp(prefix="wiretap-lab-"))
            stack.callback(shutil.rmtree, root, ignore_errors=True)
            cwd = root / "project"
            cwd.mkdir(mode=0o700)
            models = stack.enter_context(FakeModelAPIs([Call(SERVER, s.tool, s.arguments) for s in steps]))
            if client.NAME == "Codex":
                client_env, argv = codex_env(root, models.url, env), codex_argv(argv, text)
            else:
                client_env, argv = gemini_env(root, models.url, env), gemini_argv(argv, text)
        elif scripted:
            from wiretap.lab.messages_api import FakeMessagesAPI, ToolUse
            from wiretap.lab.offline import claude_env, claude_home

            root = Path(tempfile.mkdtemp(prefix="wiretap-lab-"))
            stack.callback(shutil.rmtree, root, ignore_errors=True)
            cwd = root / "project"
            cwd.mkdir(mode=0o700)
            script = [ToolUse(model_tool(s), s.arguments, stop=s.stop) for s in steps]
            api = stack.enter_context(FakeMessagesAPI(script, final_text=lambda _results: "done"))
            claude_home(root, cwd, tasks_in_print_mode=headless)
            client_env = claude_env(root, api.url, env, tasks_in_print_mode=headless)
            (root / "tmp").mkdir(mode=0o700)
            client_env["TMPDIR"] = str(root / "tmp")  # where Claude Code keeps its tasks' output
            argv = (
                scripted_argv(argv, steps) if headless else [argv[0], *allowed(steps), "--strict-mcp-config", *argv[1:]]
            )
        elif headless:
            argv = with_prompt(argv, text, steps)
        session = Session(argv, out=out, cwd=cwd, env=client_env, max_size=max_size)
        if getattr(session.discovery, "as_given", None) is not None:
            raise BadInput(f"wiretap lab: {'; '.join(session.discovery.skipped)}")
        session.discovery.servers = [s for s in session.discovery.servers if s.name != SERVER]
        session.discovery.servers.insert(0, lab_server())
        session.manifest["lab"] = {
            "conditions": list(dict.fromkeys(s.condition.name for s in steps)),
            "scripted": scripted,
        }
        if scripted:
            session.inherit_env = False
        if scripted and headless and api is not None:
            last = len(steps) - 1
            session.stdin = feed_until_quiet(text, _script_done(api, last), session.folder / f"{SERVER}.jsonl")
        elif not headless:
            say(f"wiretap lab: paste this prompt into {client.NAME} (then exit it when it says done):\n\n{text}\n")
        return session.run(), session.folder


def _script_done(api: object, last: int) -> Callable[[], bool]:
    from wiretap.lab.messages_api import FakeMessagesAPI, tool_use_id

    assert isinstance(api, FakeMessagesAPI)

    def done() -> bool:
        return any(str(r.get("tool_use_id")) == tool_use_id(last) for r in api.tool_results())

    return done
