"""Scenario MCP stdio clients with known timing, run through the real ``wiretap tap``.

``python mcp_task_client.py SCENARIO RECORDING`` starts ``wiretap tap --out RECORDING -- python
mcp_task_server.py SCENARIO``, speaks to it on the tap's pipes, and prints one JSON line: the
scenario, its shift (see scenario_clock.py) and how late its latest scheduled send was.

All times below are recording seconds. Before the schedule the client opens as a real one does
(``server/discover`` or ``initialize``, then ``tools/list``, ``prompts/list``, ``resources/list``): the
three lists anchor the schedule to the recording's clock. The summary's ``actual`` gives, for each time
below, the window in which it really happened (scenario_clock.py). Unless a time is given, a message is sent as
soon as the answer it waits for has arrived. Request ids count from 1 in order of sending (the opening
takes 1-4; the first scheduled request is #5).

cc-ext-polling       A reproduction of Claude Code 2.1.310 with the 2026-07-28 tasks extension (a
                     published investigation, October 2026): tools/call at 0.32 declaring the extension
                     -> task (pollIntervalMs 3000); tasks/get at 3.32, 6.32, 9.32, 12.32, 15.32 (the last
                     one completed); stdin closed at 15.50.
cc-ext-form          The interactive client: tools/call at 2.80; tasks/get at 5.80 (working) and 8.80
                     (input_required, a form of two inputRequests keys); the form stays open with no
                     tasks/get until 48.78, when one tasks/update carries both answers; tasks/get at 51.78
                     (completed); stdin closed at 52.00.
cc-ext-headless      The headless client: tools/call at 0.32; tasks/get at 3.32 (working) and 6.32
                     (input_required), then tasks/cancel at 6.325, as soon as that answer is in (the
                     same 10 ms tick); stdin closed at 6.50.
core-tasks           2025-11-25 core tasks: tools/call with params.task at 0.30 -> result.task
                     (pollInterval 1000); tasks/get at 1.30 (working) and 2.30 (input_required, after a
                     notifications/tasks/status); tasks/result at 2.40; the server's elicitation/create
                     "task-<id>-1" is answered at 5.40 (accept); the task completes 0.50 s later with
                     the tasks/result answer (5.90); stdin closed at 6.20.
exit-no-cancel       2025-11-25 task (pollInterval 500) at 0.30; tasks/get at 0.80, 1.30; stdin closed at
                     1.50 while the task is working, never cancelled; the server exits 0.30 s later.
exit-cancel          as exit-no-cancel, but tasks/cancel at 1.50 (-> cancelled); stdin closed at 1.60.
task-without-support tools/call at 0.30 from a 2026-07-28 client that declares no tasks extension; the
                     server answers with a task anyway; stdin closed at 0.60.
unknown-task         extension task (pollIntervalMs 500) at 0.30; tasks/get at 0.80 (working), 1.30
                     (-32602 task not found) and 1.80 (-32602 again: polling on); stdin closed at 2.00.
repeat-after-unknown tools/call deploy at 0.30 -> -32001 "Request timed out" at 2.30; the same call again
                     at 3.30 -> success; stdin closed at 3.50.
slow-poll            extension task (pollIntervalMs 500) at 0.30; tasks/get at 0.50 answered at 15.60
                     (15.10 s); stdin closed at 15.70.
failed-poll-run      extension task (pollIntervalMs 500) at 0.30; tasks/get at 0.80, 1.30, 1.80 (-32603
                     each), 2.30 (working), 2.80 (completed); stdin closed at 3.00.
unanswered           2025-11-25 session: tools/call hang at 0.30 (the server sends roots/list "roots-1"
                     at once, never answered), resources/read at 0.50 (never answered); stdin closed at
                     1.00.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from scenario_clock import RecordingClock

HERE = Path(__file__).resolve().parent
SERVER = HERE / "mcp_task_server.py"
TASKS_EXT = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
CLIENT_INFO = {"name": "claude-code", "version": "2.1.310"}


def modern_meta(*, tasks: bool) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"extensions": {TASKS_EXT: {}}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


class Session:
    """The client end of ``wiretap tap``: requests with running ids, answers and server requests queued."""

    def __init__(self, scenario: str, recording: Path) -> None:
        self.scenario = scenario
        self.clock = RecordingClock(recording)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wiretap",
                "tap",
                "--out",
                str(recording),
                "--name",
                scenario,
                "--",
                sys.executable,
                str(SERVER),
                scenario,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.next_id = 0
        self.answers: dict[Any, tuple[float, dict[str, Any]]] = {}
        self.incoming: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.received = 0.0
        """The monotonic time the message ``wait`` returned last had arrived."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.incoming.put((time.monotonic(), json.loads(line)))

    def send(self, message: dict[str, Any], at: float | None = None) -> float:
        """Write one message (at recording time ``at``, if given); return the monotonic send time."""
        if at is not None:
            self.clock.at(at)
        assert self.proc.stdin is not None
        data = (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode()
        sent = time.monotonic()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return sent

    def call(self, method: str, params: dict[str, Any], at: float | None = None) -> tuple[Any, float]:
        self.next_id += 1
        return self.next_id, self.send({"id": self.next_id, "method": method, "params": params}, at)

    def wait(self, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The next incoming message that ``predicate`` accepts (answers are kept by id as they pass)."""
        deadline = time.monotonic() + timeout
        for rid, (received, answer) in list(self.answers.items()):
            if predicate(answer):
                del self.answers[rid]
                self.received = received
                return answer
        while True:
            received, message = self.incoming.get(timeout=max(0.001, deadline - time.monotonic()))
            if predicate(message):
                self.received = received
                return message
            if "method" not in message:
                self.answers[message.get("id")] = (received, message)

    def answer(self, rid: Any) -> dict[str, Any]:
        return self.wait(lambda m: "method" not in m and m.get("id") == rid)

    def request(self, method: str, params: dict[str, Any], at: float | None = None) -> dict[str, Any]:
        """Send a request (at ``at``), wait for its answer; both happened between the send and the answer."""
        rid, sent = self.call(method, params, at)
        answer = self.answer(rid)
        if at is not None:
            self.clock.mark(at, sent, self.received)
        return answer

    def unanswered_for_now(self, rid: Any, at: float, sent: float) -> None:
        """A request sent at ``at`` that is answered late or never: it was stamped by the time it is in
        the recording."""
        recorded = self.clock.seen(lambda e: e.get("kind") == "message" and e.get("msg", {}).get("id") == rid)
        self.clock.mark(at, sent, recorded)

    def start(self, *, modern: bool, tasks: bool = True, first: float) -> None:
        """The opening exchange; the three lists anchor the schedule; ``first`` is its first time."""
        if modern:
            self.request("server/discover", {"_meta": modern_meta(tasks=tasks)})
        else:
            capabilities: dict[str, Any] = {
                "elicitation": {"form": {}},
                "tasks": {"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}},
            }
            self.request(
                "initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": CLIENT_INFO}
            )
            self.send({"method": "notifications/initialized"})
        params = {"_meta": modern_meta(tasks=tasks)} if modern else {}
        for method in ("tools/list", "prompts/list", "resources/list"):
            rid, sent = self.call(method, params)
            self.answer(rid)
            self.clock.anchor(
                sent,
                lambda e, rid=rid: e.get("kind") == "message" and e.get("msg", {}).get("id") == rid,
                answered_at=self.received,
            )
        self.clock.begin(first)

    def close(self, at: float, server_exit_after: float | None = None) -> None:
        """Close stdin at ``at``; a server that exits ``server_exit_after`` later is marked at that time."""
        self.clock.at(at)
        assert self.proc.stdin is not None
        closed = time.monotonic()
        self.proc.stdin.close()
        self.clock.mark(at, closed, self.clock.seen(lambda e: e.get("kind") == "eof" and e.get("dir") == "c2s"))
        if server_exit_after is not None:
            exited = self.clock.seen(lambda e: e.get("kind") == "exit")
            self.clock.mark(at + server_exit_after, closed + server_exit_after, exited)
        self.proc.wait(30)
        self._reader.join(10)


def ext_call(s: Session, at: float, *, tasks: bool = True) -> str:
    params = {"name": "run_migration", "arguments": {"table": "orders"}, "_meta": modern_meta(tasks=tasks)}
    return str(s.request("tools/call", params, at)["result"]["taskId"])


def ext_get(s: Session, task_id: str, at: float | None) -> dict[str, Any]:
    return s.request("tasks/get", {"taskId": task_id, "_meta": modern_meta(tasks=True)}, at)


def core_call(s: Session, at: float) -> str:
    params = {"name": "run_migration", "arguments": {"table": "orders"}, "task": {"ttl": 60_000}}
    return str(s.request("tools/call", params, at)["result"]["task"]["taskId"])


def cc_ext_polling(s: Session) -> None:
    s.start(modern=True, first=0.32)
    task = ext_call(s, 0.32)
    for t in (3.32, 6.32, 9.32, 12.32, 15.32):
        status = ext_get(s, task, t)["result"]["status"]
    assert status == "completed", status
    s.close(15.50)


def cc_ext_form(s: Session) -> None:
    s.start(modern=True, first=2.80)
    task = ext_call(s, 2.80)
    ext_get(s, task, 5.80)
    form = ext_get(s, task, 8.80)["result"]
    assert form["status"] == "input_required" and len(form["inputRequests"]) == 2, form
    answers = {
        "environment": {"action": "accept", "content": {"environment": "staging"}},
        "confirm_downtime": {"action": "accept", "content": {"confirm": True}},
    }
    assert set(answers) == set(form["inputRequests"])
    params = {"taskId": task, "inputResponses": answers, "_meta": modern_meta(tasks=True)}
    s.request("tasks/update", params, 48.78)
    assert ext_get(s, task, 51.78)["result"]["status"] == "completed"
    s.close(52.00)


def cc_ext_headless(s: Session) -> None:
    s.start(modern=True, first=0.32)
    task = ext_call(s, 0.32)
    ext_get(s, task, 3.32)
    assert ext_get(s, task, 6.32)["result"]["status"] == "input_required"
    s.request("tasks/cancel", {"taskId": task, "_meta": modern_meta(tasks=True)}, 6.325)
    s.close(6.50)


def core_tasks(s: Session) -> None:
    s.start(modern=False, first=0.30)
    task = core_call(s, 0.30)
    s.request("tasks/get", {"taskId": task}, 1.30)
    assert s.request("tasks/get", {"taskId": task}, 2.30)["result"]["status"] == "input_required"
    result_id, sent = s.call("tasks/result", {"taskId": task}, 2.40)
    question = s.wait(lambda m: m.get("method") == "elicitation/create")
    s.clock.mark(2.40, sent, s.received)  # the server asks as soon as tasks/result arrives
    assert question["id"] == f"task-{task}-1"
    reply = {"action": "accept", "content": {"environment": "staging"}}
    answered = s.send({"id": question["id"], "result": reply}, 5.40)
    working = s.wait(lambda m: m.get("method") == "notifications/tasks/status" and m["params"]["status"] == "working")
    s.clock.mark(5.40, answered, s.received)  # the server says "working" as soon as the answer arrives
    assert s.answer(result_id)["result"]["isError"] is False
    s.clock.mark(5.90, answered + 0.50, s.received)  # completed 0.50 s after the answer arrived
    assert working["params"]["taskId"] == task
    s.close(6.20)


def exit_tasks(s: Session, *, cancel: bool) -> None:
    s.start(modern=False, first=0.30)
    task = core_call(s, 0.30)
    for t in (0.80, 1.30):
        s.request("tasks/get", {"taskId": task}, t)
    if cancel:
        assert s.request("tasks/cancel", {"taskId": task}, 1.50)["result"]["status"] == "cancelled"
        s.close(1.60)
    else:
        s.close(1.50, server_exit_after=0.30)


def task_without_support(s: Session) -> None:
    s.start(modern=True, tasks=False, first=0.30)
    ext_call(s, 0.30, tasks=False)
    s.close(0.60)


def unknown_task(s: Session) -> None:
    s.start(modern=True, first=0.30)
    task = ext_call(s, 0.30)
    assert "result" in ext_get(s, task, 0.80)
    for t in (1.30, 1.80):
        assert ext_get(s, task, t)["error"]["code"] == -32602
    s.close(2.00)


def repeat_after_unknown(s: Session) -> None:
    s.start(modern=True, first=0.30)
    params = {
        "name": "deploy",
        "arguments": {"service": "billing", "version": "2.4.1"},
        "_meta": modern_meta(tasks=True),
    }
    rid, sent = s.call("tools/call", params, 0.30)
    s.unanswered_for_now(rid, 0.30, sent)
    assert s.answer(rid)["error"]["code"] == -32001
    s.clock.mark(2.30, sent + 2.00, s.received)  # the server answers 2.00 s after the call arrived
    assert "result" in s.request("tools/call", params, 3.30)
    s.close(3.50)


def slow_poll(s: Session) -> None:
    s.start(modern=True, first=0.30)
    task = ext_call(s, 0.30)
    rid, sent = s.call("tasks/get", {"taskId": task, "_meta": modern_meta(tasks=True)}, 0.50)
    s.unanswered_for_now(rid, 0.50, sent)
    assert s.answer(rid)["result"]["status"] == "completed"
    s.clock.mark(15.60, sent + 15.10, s.received)  # the server answers 15.10 s after the poll arrived
    s.close(15.70)


def failed_poll_run(s: Session) -> None:
    s.start(modern=True, first=0.30)
    task = ext_call(s, 0.30)
    for t in (0.80, 1.30, 1.80):
        assert ext_get(s, task, t)["error"]["code"] == -32603
    assert ext_get(s, task, 2.30)["result"]["status"] == "working"
    assert ext_get(s, task, 2.80)["result"]["status"] == "completed"
    s.close(3.00)


def unanswered(s: Session) -> None:
    s.start(modern=False, first=0.30)
    _, sent = s.call("tools/call", {"name": "hang", "arguments": {}}, 0.30)
    assert s.wait(lambda m: m.get("method") == "roots/list")["id"] == "roots-1"
    s.clock.mark(0.30, sent, s.received)  # the server asks as soon as the call arrives
    rid, sent = s.call("resources/read", {"uri": "file:///var/log/never.log"}, 0.50)
    s.unanswered_for_now(rid, 0.50, sent)
    s.close(1.00)


SCENARIOS = {
    "cc-ext-polling": cc_ext_polling,
    "cc-ext-form": cc_ext_form,
    "cc-ext-headless": cc_ext_headless,
    "core-tasks": core_tasks,
    "exit-no-cancel": lambda s: exit_tasks(s, cancel=False),
    "exit-cancel": lambda s: exit_tasks(s, cancel=True),
    "task-without-support": task_without_support,
    "unknown-task": unknown_task,
    "repeat-after-unknown": repeat_after_unknown,
    "slow-poll": slow_poll,
    "failed-poll-run": failed_poll_run,
    "unanswered": unanswered,
}


def main(scenario: str, recording: Path) -> None:
    session = Session(scenario, recording)
    try:
        SCENARIOS[scenario](session)
    finally:
        if session.proc.poll() is None:
            session.proc.kill()
            session.proc.wait(10)
    print(json.dumps(session.clock.summary(scenario, returncode=session.proc.returncode)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
