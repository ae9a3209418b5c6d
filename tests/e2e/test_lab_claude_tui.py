"""``wiretap lab --scripted -- claude`` with the real Claude Code 2.1.332's TUI in tmux, offline: the shipped
fake model calls the lab's tools (the cadence at 1000 ms, 100 ms and none; a question; a task it stops with
TaskStop and one it leaves running), the test fills in the form Claude Code shows for ``input_required`` as
a person would, then exits with the task still running. The investigation must show the cadences, the form
open with no polls inside and its one ``tasks/update``, and no cancel on exit with the stdio server's
SIGINT, each checked against the recording and what the test itself did."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.eventually import eventually
from support.taprun import settled_read_all
from support.wrapped_claude import PROMPT_MARK, Tmux, has_answer

from wiretap.analysis.session_report import build_session_report
from wiretap.lab.investigation import LATE_SHARE, Investigation, Row, build_investigation

pytestmark = pytest.mark.slow

CONDITIONS = "poll-interval,input-required,until-cancelled"
CADENCE = 0.02
FORM = "requests your input"
Json = dict[str, Any]


def lines(recording: Path) -> list[Json]:
    found = []
    with contextlib.suppress(FileNotFoundError):
        for line in recording.read_text().splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


def completed(recording: Path) -> set[str]:
    """The tasks the server has told the client are completed, so far."""
    return {
        str(e["msg"]["result"].get("taskId"))
        for e in lines(recording)
        if e.get("kind") == "message" and e["dir"] == "s2c" and isinstance(e["msg"].get("result"), dict)
        if e["msg"]["result"].get("status") == "completed"
    }


def sent(recording: Path, method: str) -> list[Json]:
    messages = [e for e in lines(recording) if e.get("kind") == "message" and e["dir"] == "c2s"]
    return [e for e in messages if e["msg"].get("method") == method]


def wait_for(tmux: Tmux, text: str, timeout: float) -> None:
    """``text`` on the screen, the no-break spaces Claude Code draws read as spaces."""
    shown = lambda: text in tmux.screen().replace("\N{NO-BREAK SPACE}", " ")  # noqa: E731
    eventually(shown, f"{text!r} on the screen", timeout, tmux.screen)


def press_until(tmux: Tmux, key: str, done: Callable[[], bool], what: str, tries: int = 5) -> None:
    """Press ``key`` until ``done``: a key pressed the moment a form is drawn may reach it before it listens."""
    for _ in range(tries):
        tmux("send-keys", "-t", "main", key)
        with contextlib.suppress(AssertionError):
            eventually(done, what, 3, tmux.screen)
            return
    eventually(done, what, 1, tmux.screen)


@pytest.fixture(scope="module")
def tui(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            raise RuntimeError("tmux is not installed: the TUI acceptance needs it")
        pytest.skip("tmux is not installed")
    root = tmp_path_factory.mktemp("lab-tui")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude_code_bin)
    session = root / "session"
    recording = session / "wiretap-lab.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "HOME": str(root / "home")}
    command = [sys.executable, "-m", "wiretap", "lab", "--scripted", "--conditions", CONDITIONS, "-o", str(session)]
    tmux = Tmux(root / "tmux.sock", env)
    screens: dict[str, str] = {}
    try:
        tmux(
            "new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-c", str(root), *command, "--", "claude",
            ";", "set-option", "-t", "main", "remain-on-exit", "on",
            cwd=root,
        )  # fmt: skip
        tmux.wait_for(PROMPT_MARK)
        eventually(lambda: has_answer(recording, "tools/list"), "no tools/list answered", 60, tmux.screen)
        time.sleep(1.0)  # for Claude Code to take the tools in, and the screen to settle
        tmux("send-keys", "-t", "main", "-l", "go")
        wait_for(tmux, f"{PROMPT_MARK} go", 15)
        tmux("send-keys", "-t", "main", "Enter")
        screens["form"] = tmux.wait_for(FORM, 60)
        # The form stays open while the three cadence tasks run to their end.
        polls = lambda: {t for t in completed(recording) if t.endswith("-poll-interval")}  # noqa: E731
        eventually(lambda: len(polls()) == 3, "the cadence tasks did not complete", 60, tmux.screen)
        for key, then in (
            ("Right", "◯ staging"),
            ("Space", "✔ Environment: ▸ staging"),
            ("Down", "Go ahead?: ☐"),
            ("Space", "Go ahead?: ☒"),
            ("Down", f"{PROMPT_MARK} Accept"),
        ):
            tmux("send-keys", "-t", "main", key)
            wait_for(tmux, then, 15)
        press_until(tmux, "Enter", lambda: bool(sent(recording, "tasks/update")), "no tasks/update")
        tmux.wait_for("(wiretap-lab/input_task) completed", 30)
        tmux("send-keys", "-t", "main", "-l", "/exit")
        tmux.wait_for("/exit", 15)
        time.sleep(0.3)  # the command menu
        tmux("send-keys", "-t", "main", "Enter")
        screens["exit"] = tmux.wait_for("Exit and stop tasks", 15)
        tmux("send-keys", "-t", "main", "Enter")
        manifest = session / "manifest.json"
        ended = lambda: manifest.exists() and json.loads(manifest.read_text()).get("running") is False  # noqa: E731
        eventually(ended, "wiretap lab did not end", 60, tmux.screen)
        eventually(lambda: tmux.pane("pane_dead") == "1", "wiretap lab did not exit", 60, tmux.screen)
        screens["end"] = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main")  # with its history
    finally:
        tmux.kill_everything()
    _, events, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    report = build_session_report(session)
    return {
        "session": session,
        "events": events,
        "report": report,
        "investigation": build_investigation(report),
        "screens": screens,
    }


def rows(investigation: Investigation, condition: str) -> list[Row]:
    return [r for r in investigation.rows if r.condition == condition]


def about(events: list[Json], task: str) -> list[Json]:
    return [e for e in events if e["kind"] == "message" and task in json.dumps(e["msg"])]


def test_the_tui_polls_at_the_asked_interval_the_clamp_and_the_default(tui) -> None:
    """The fastest settled interval is the rule's, never early and late by at most the lab's share: while the TUI
    draws (each task's end is a turn of the model) its timers run late on a loaded machine, and the lab judges
    by the interval the client schedules, not by how late its machine runs it."""
    asked, clamped, default = rows(tui["investigation"], "poll-interval")
    tasks = {t["id"]: t for t in tui["report"].to_dict()["tasks"]}
    for row, applied in ((asked, 1000), (clamped, 250), (default, 2000)):
        task = tasks[row.task]
        late = max(CADENCE, LATE_SHARE * applied / 1000)
        assert -CADENCE <= task["settled_floor"] - applied / 1000 <= late, (row, task["pattern"])
        assert task["settled_interval"] >= task["settled_floor"]
        assert task["applied_poll_ms"] == applied
        assert row.agrees is True, row.verdict
    assert asked.verdict.startswith("the asked interval: ")
    assert clamped.verdict.startswith("the asked interval clamped to 250 ms: ")
    assert default.verdict.startswith("its default, 2000 ms: ")
    assert tui["investigation"].client == "Claude Code" and tui["investigation"].client_version == "2.1.332"


def test_the_form_is_open_with_no_polls_inside_and_answered_by_one_tasks_update(tui) -> None:
    [row] = rows(tui["investigation"], "input-required")
    assert row.verdict.startswith("stops polling while the form is open") and row.agrees is True
    [question] = [q for q in tui["report"].questions if q.task == row.task]
    assert question.polls_inside == [] and not question.cancelled_instead
    said = about(tui["events"], row.task)
    asked = next(n for n, e in enumerate(said) if e["dir"] == "s2c" and '"input_required"' in json.dumps(e["msg"]))
    client = [e for e in said[asked + 1 :] if e["dir"] == "c2s"]
    assert [e["msg"]["method"] for e in client][:2] == ["tasks/update", "tasks/get"], "no poll before the answer"
    [update] = [e for e in client if e["msg"]["method"] == "tasks/update"]
    responses = update["msg"]["params"]["inputResponses"]
    assert set(responses) == {"lab_form", "lab_roots"}, "one tasks/update carries every answer"
    assert responses["lab_form"]["action"] == "accept"
    assert responses["lab_form"]["content"] == {"environment": "staging", "confirm": True}
    assert update["t"] - said[asked]["t"] >= 3.0, "the form stayed open while the cadence tasks ran"
    assert "MCP server “wiretap-lab” requests your input" in tui["screens"]["form"]


def test_exit_with_a_live_task_sends_no_cancel_and_the_stdio_server_gets_sigint(tui) -> None:
    stopped, left = rows(tui["investigation"], "until-cancelled")
    assert stopped.verdict == "stopped during the session (TaskStop), not a cancel on exit"
    assert left.verdict == "no cancel on exit with a live task" and left.agrees is True
    assert "MCP task · wiretap-lab/endless_task" in tui["screens"]["exit"]
    cancels = [e for e in about(tui["events"], left.task) if e["dir"] == "c2s" and e["msg"].get("method")]
    assert {e["msg"]["method"] for e in cancels} == {"tasks/get"}, "only polls, never a cancel"
    [signal] = [e for e in tui["events"] if e["kind"] == "signal"]
    assert signal["signal"] == "SIGINT" and signal["forwarded"] is True
    [exit_event] = [e for e in tui["events"] if e["kind"] == "exit"]
    assert exit_event["code"] == 0 and exit_event["t"] >= signal["t"]
    cancel = tui["report"].verdicts.cancel_on_exit
    assert cancel.sent is False and cancel.live_tasks == [left.task]
    assert "Investigation of session session: Claude Code 2.1.332" in tui["screens"]["end"]


def test_lab_report_renders_the_session_again_as_it_was_printed(tui) -> None:
    again = subprocess.run(
        [sys.executable, "-m", "wiretap", "lab", "report", str(tui["session"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0
    assert again.stdout.splitlines()[0] == "Investigation of session session: Claude Code 2.1.332"
