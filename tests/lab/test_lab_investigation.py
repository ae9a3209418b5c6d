"""The investigation of recordings made here: a scripted client of known schedule talks to the lab's probe
through ``wiretap tap``, and each table value is checked against what the client itself did (its own
send times, the answers it got, the cancels it sent)."""

from __future__ import annotations

import json
import queue
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.taprun import TAP, settled_read_all

from wiretap.analysis.report import build_report
from wiretap.lab.conditions import LAB_META, parse_conditions
from wiretap.lab.investigation import build_investigation
from wiretap.lab.investigation_model import Investigation, Row
from wiretap.lab.investigation_output import render_html, render_markdown, render_text

PROBE = [sys.executable, "-m", "wiretap", "lab", "serve"]
CLOSE = 0.01
"""The recording's time of a message against the client's own: the tap stamps it as it passes."""


@dataclass
class Client:
    """A 2025-11-25 client on the tap's pipes that keeps its own clock of what it sent and got."""

    proc: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)
    answers: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)
    notifications: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    ids: int = 0

    reader: threading.Thread | None = None

    def start(self) -> Client:
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self

    def close(self) -> None:
        assert self.proc.stdout is not None and self.reader is not None
        self.reader.join(30)
        self.proc.stdout.close()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "method" in message and "id" not in message:
                self.notifications.append((self.now(), message))
            elif "method" not in message:
                self.answers.put(message)

    def now(self) -> float:
        return time.monotonic() - self.started

    def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()
        return self.now()

    def request(self, method: str, params: dict[str, Any]) -> tuple[int, float]:
        self.ids += 1
        return self.ids, self.send({"id": self.ids, "method": method, "params": params})

    def answer(self, rid: int) -> dict[str, Any]:
        while True:
            found = self.answers.get(timeout=30)
            if found.get("id") == rid:
                return found

    def call(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
        rid, sent = self.request(method, params)
        return self.answer(rid), sent

    def sleep_until(self, t: float) -> None:
        time.sleep(max(0.0, t - self.now()))


@dataclass
class Truth:
    polls: list[float] = field(default_factory=list)
    poll_errors: int = 0
    inline_after: float = 0.0
    cancelled_after: float = 0.0
    progress: int = 0
    stop_cancels: list[float] = field(default_factory=list)
    forgotten_polls: list[tuple[float, bool]] = field(default_factory=list)
    failing_errors: int = 0
    failing_polls: int = 0


def tool(name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, **extra}


def poll_every(client: Client, task: str, every: float, until: float, into: list[tuple[float, bool]]) -> None:
    """Poll at the client's own fixed schedule, recording each send time and whether it failed."""
    n = 1
    start = client.now()
    while start + n * every < until:
        client.sleep_until(start + n * every)
        answer, sent = client.call("tasks/get", {"taskId": task})
        into.append((sent, "error" in answer))
        if answer.get("result", {}).get("status") in ("completed", "failed", "cancelled"):
            return
        n += 1


def run_client(recording: Path) -> tuple[Truth, Path]:
    proc = subprocess.Popen(
        [*TAP, "--out", str(recording), "--", *PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    client = Client(proc).start()
    truth = Truth()
    info = {"name": "lab-test-client", "version": "1.0"}
    client.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}}, "clientInfo": info})
    client.send({"method": "notifications/initialized"})

    # poll-interval: the server asks 200 ms, this client polls every 300 ms.
    created, _ = client.call("tools/call", tool("poll_task", {"interval_ms": 200, "seconds": 1.4}, task={}))
    task = created["result"]["task"]["taskId"]
    polls: list[tuple[float, bool]] = []
    poll_every(client, task, 0.3, client.now() + 5, polls)
    truth.polls = [t for t, _ in polls]

    # A call that asks for no task: answered inline.
    answer, sent = client.call("tools/call", tool("poll_task", {"seconds": 0.2}))
    assert "task" not in answer["result"]
    truth.inline_after = client.now() - sent

    # slow-answer: this client gives up after 0.4 s.
    rid, sent = client.request("tools/call", tool("slow_call", {"seconds": 30}))
    client.sleep_until(sent + 0.4)
    truth.cancelled_after = client.send({"method": "notifications/cancelled", "params": {"requestId": rid}}) - sent

    # progress: three notifications, every 0.1 s.
    params = tool("progress_call", {"count": 3, "every_s": 0.1}, _meta={"progressToken": "p-1"})
    client.call("tools/call", params)
    truth.progress = sum(1 for _, n in client.notifications if n["method"] == "notifications/progress")

    # until-cancelled, stopped: two cancels at once, long before the exit.
    created, _ = client.call("tools/call", tool("endless_task", {"interval_ms": 1000}, task={}))
    stopped = created["result"]["task"]["taskId"]
    for _ in range(2):
        truth.stop_cancels.append(client.request("tasks/cancel", {"taskId": stopped})[1])

    # forgotten-task: forgotten 0.5 s after it starts; polled every 0.25 s from 0.125 s, for 1.6 s.
    created, _ = client.call("tools/call", tool("forgotten_task", {"interval_ms": 250, "forget_after_s": 0.5}, task={}))
    forgotten = created["result"]["task"]["taskId"]
    client.sleep_until(client.now() + 0.125)
    poll_every(client, forgotten, 0.25, client.now() + 1.6, truth.forgotten_polls)

    # failing-polls: the first two polls fail, the task completes after 0.6 s.
    created, _ = client.call(
        "tools/call", tool("failing_polls_task", {"interval_ms": 150, "failures": 2, "seconds": 0.6}, task={})
    )
    failing: list[tuple[float, bool]] = []
    poll_every(client, created["result"]["task"]["taskId"], 0.15, client.now() + 5, failing)
    truth.failing_polls, truth.failing_errors = len(failing), sum(1 for _, failed in failing if failed)

    # until-cancelled, left running: the client exits 1 s after starting it, without a cancel.
    client.call("tools/call", tool("endless_task", {"interval_ms": 1000}, task={}))
    time.sleep(1.0)
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(30) == 0
    client.close()
    settled_read_all(recording)
    return truth, recording


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Truth, Investigation, Any]:
    truth, recording = run_client(tmp_path_factory.mktemp("lab") / "probe.jsonl")
    report = build_report(recording, timeline=True)
    return truth, build_investigation(report), report


def rows_of(investigation: Investigation, condition: str) -> list[Row]:
    return [r for r in investigation.rows if r.condition == condition]


def test_every_call_the_client_made_is_a_row_of_its_condition_with_the_settings_the_server_stated(session) -> None:
    _, investigation, report = session
    assert [r.condition for r in investigation.rows] == [
        "poll-interval",
        "poll-interval",
        "slow-answer",
        "progress",
        "until-cancelled",
        "forgotten-task",
        "failing-polls",
        "until-cancelled",
    ]
    assert all(LAB_META in call.meta for call in report.calls if call.outcome != "unanswered")
    assert investigation.rows[0].asked == "pollIntervalMs 200 (interval_ms 200, seconds 1.4)"
    assert investigation.client == "lab-test-client" and investigation.client_version == "1.0"


def test_the_cadence_is_the_clients_own_300_ms_against_the_asked_200_and_no_rule_is_claimed(session) -> None:
    truth, investigation, report = session
    [task] = [t for t in report.tasks if t.tool == "poll_task"]
    own = statistics.median(b - a for a, b in zip(truth.polls, truth.polls[1:], strict=False))
    assert task.settled_interval is not None and abs(task.settled_interval - own) <= CLOSE
    assert len(task.polls) == len(truth.polls)
    row = rows_of(investigation, "poll-interval")[0]
    assert (
        row.verdict == f"{task.settled_interval * 1000 / 200:.2f}× the asked interval (no known rule for this client)"
    )
    assert row.agrees is None
    [poll] = [a for a in investigation.answers if a.question == "Does it poll at pollIntervalMs?"]
    assert poll.rule is None and "Claude Code" not in render_text(investigation)


def test_a_call_without_a_task_is_answered_inline_and_the_one_shot_question_says_so(session) -> None:
    truth, investigation, _ = session
    row = rows_of(investigation, "poll-interval")[1]
    assert row.verdict == "a one-shot call: answered inline, nothing to poll"
    assert "(the call declared no tasks)" in row.did
    seconds = float(row.did.split("after ")[1].split(" s")[0])
    assert abs(seconds - truth.inline_after) <= CLOSE
    [inline] = [a for a in investigation.answers if a.question == "Does a one-shot run answer inline?"]
    assert "answered inline" in inline.seen


def test_the_clients_cancel_of_a_slow_call_is_its_request_timeout(session) -> None:
    truth, investigation, _ = session
    [row] = rows_of(investigation, "slow-answer")
    seconds = float(row.verdict.removeprefix("its request timeout: ").removesuffix(" s"))
    assert abs(seconds - truth.cancelled_after) <= CLOSE


def test_progress_counts_every_notification_the_client_received(session) -> None:
    truth, investigation, _ = session
    [row] = rows_of(investigation, "progress")
    assert truth.progress == 3
    assert row.did.startswith(f"{truth.progress} progress notifications; answered after")
    assert row.verdict == "waited for the answer through its progress"


def test_two_cancels_at_once_long_before_the_exit_are_a_stop_and_the_task_left_running_is_no_cancel(session) -> None:
    truth, investigation, _ = session
    stopped, left = rows_of(investigation, "until-cancelled")
    assert stopped.verdict == "stopped during the session (TaskStop), not a cancel on exit"
    assert stopped.did.startswith("2 cancels at once at")
    assert abs(stopped.evidence[1] - stopped.evidence[0] - (truth.stop_cancels[1] - truth.stop_cancels[0])) <= CLOSE
    assert "cancelled, not live at exit" in stopped.did
    assert left.verdict == "no cancel on exit with a live task" and left.agrees is None
    assert "no cancel" in left.did and "stdin closed" in left.did


def test_the_forgotten_task_counts_the_polls_the_client_sent_after_the_server_forgot_it(session) -> None:
    truth, investigation, _ = session
    [row] = rows_of(investigation, "forgotten-task")
    failed = sum(1 for _, error in truth.forgotten_polls if error)
    assert failed > 0
    assert row.did.startswith(f"{failed} polls for the forgotten id ({failed} failed)")
    assert row.verdict.startswith("gave up") and row.verdict.endswith(f"({failed} polls)")


def test_failing_polls_count_the_errors_the_client_got_and_its_retries(session) -> None:
    truth, investigation, _ = session
    [row] = rows_of(investigation, "failing-polls")
    assert truth.failing_errors == 2
    assert row.did == f"2 polls failed, {truth.failing_polls - 2} succeeded; completed"
    assert row.verdict == "retries failed polls: went on after 2 failures"


def test_conditions_narrow_the_rows_and_the_renderers_show_every_row(session) -> None:
    _, investigation, report = session
    narrowed = build_investigation(report, parse_conditions("progress,input_task"))
    assert [r.condition for r in narrowed.rows] == ["progress"] and narrowed.not_run == ["input-required"]
    markdown = render_markdown(investigation)
    assert markdown.count("\n| poll-interval (poll_task) |") == 2
    assert "| question | lab-test-client's rule | this session | as its rule |" in markdown
    page = render_html(investigation, report)
    assert page.count("<tr><td>") == len(investigation.rows) + len(investigation.answers)
    assert "<svg" in page and "failing-polls (failing_polls_task)" in page
    assert "Not run in this session: input-required." in render_text(narrowed)
