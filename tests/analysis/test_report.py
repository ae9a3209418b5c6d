"""The report's analyses on event sequences of known truth (no processes: the scenarios with real
processes live in test_report_scenarios.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.report_schema import valid_report

from wiretap.analysis.report import Analysis
from wiretap.analysis.stats import EXACT_LIMIT, Distribution
from wiretap.analysis.task_rows import applied_poll_ms
from wiretap.cli import cli
from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

EXT_META = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


class Script:
    """Builds a recording's events with a running id, the way a client and server would exchange them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._id = 0

    def send(self, t: float, direction: str, body: dict[str, Any], **extra: Any) -> None:
        self.events.append({"t": t, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}, **extra})

    def call(
        self,
        t: float,
        method: str,
        params: dict[str, Any],
        answer_t: float | None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        **extra: Any,
    ) -> None:
        self._id += 1
        self.send(t, "c2s", {"id": self._id, "method": method, "params": params}, **extra)
        if answer_t is not None:
            reply = {"id": self._id, "error": error} if error else {"id": self._id, "result": result}
            self.send(answer_t, "s2c", reply, **extra)

    def lifecycle(self, t: float, kind: str, **fields: Any) -> None:
        self.events.append({"t": t, "kind": kind, **fields})

    def report(self) -> dict[str, Any]:
        analysis = Analysis()
        for event in self.events:
            analysis.feed(event)
        return valid_report(analysis.report({"name": "t", "transport": "stdio", "started": "x"}, "test", 0).to_dict())


def ext_task_status(task_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {"resultType": "complete", "taskId": task_id, "status": status, "pollIntervalMs": 3000, **more}


def claude_code_like(*, answer_at: float | None, cancel_at: float | None = None) -> Script:
    s = Script()
    s.call(
        0.30,
        "tools/call",
        {"name": "build_report", "arguments": {}, "_meta": EXT_META},
        0.32,
        {"resultType": "task", "taskId": "T1", "status": "working", "pollIntervalMs": 3000, "ttlMs": 60000},
    )
    s.call(3.32, "tasks/get", {"taskId": "T1"}, 3.33, ext_task_status("T1", "working"))
    s.call(6.32, "tasks/get", {"taskId": "T1"}, 6.33, ext_task_status("T1", "working"))
    s.call(
        8.80,
        "tasks/get",
        {"taskId": "T1"},
        8.80,
        ext_task_status("T1", "input_required", inputRequests={"format": {}, "pages": {}}),
    )
    if cancel_at is not None:
        s.call(cancel_at, "tasks/cancel", {"taskId": "T1"}, cancel_at + 0.001, {"resultType": "complete"})
        return s
    assert answer_at is not None
    s.call(
        answer_at,
        "tasks/update",
        {"taskId": "T1", "inputResponses": {"format": {"action": "accept"}, "pages": {"action": "accept"}}},
        answer_at + 0.001,
        {"resultType": "complete"},
    )
    s.call(
        answer_at + 3.0,
        "tasks/get",
        {"taskId": "T1"},
        answer_at + 3.01,
        ext_task_status("T1", "completed", result={"content": []}),
    )
    return s


def test_poll_intervals_are_measured_against_the_requested_one() -> None:
    s = Script()
    s.call(
        0.32,
        "tools/call",
        {"name": "build", "_meta": EXT_META},
        0.33,
        {"resultType": "task", "taskId": "T", "status": "working", "pollIntervalMs": 3000},
    )
    for t in (3.32, 6.32, 9.32, 12.32, 15.32):
        s.call(t, "tasks/get", {"taskId": "T"}, t + 0.01, ext_task_status("T", "working" if t < 15 else "completed"))
    report = s.report()
    (task,) = report["tasks"]
    assert (task["design"], task["tool"], task["requested_poll_ms"], task["applied_poll_ms"]) == (
        "mcp-tasks-extension",
        "build",
        3000,
        None,  # no clientInfo: no client's rule to apply
    )
    assert task["polls"] == [3.32, 6.32, 9.32, 12.32, 15.32]
    assert task["intervals"] == {"count": 4, "min": 3.0, "median": 3.0, "p95": 3.0, "max": 3.0}
    assert task["first_poll_after"] == pytest.approx(2.99)
    assert task["final_state"] == "completed" and task["terminal"]
    assert "every 3.00 s" in report["verdicts"]["poll_intervals"]["verdict"]
    assert "1.00× the requested interval" in report["verdicts"]["poll_intervals"]["verdict"]


@pytest.mark.parametrize(("requested", "applied"), [(None, 2000), (100, 250), (3000, 3000), (60_000, 30_000)])
def test_the_applied_interval_follows_claude_codes_clamp_rule(requested: int | None, applied: int) -> None:
    assert applied_poll_ms(requested) == applied


def test_a_form_left_open_shows_its_polling_gap_and_its_answer() -> None:
    report = claude_code_like(answer_at=48.78).report()
    (question,) = report["questions"]
    assert question["kind"] == "task_input_required" and question["task"] == "T1"
    assert (question["opened"], question["closed"]) == (8.8, 48.78)
    assert question["polls_inside"] == [] and question["longest_gap"] == pytest.approx(39.98)
    assert question["answered_by"] == "tasks/update" and not question["cancelled_instead"]
    assert question["cadence_outside"] == pytest.approx(2.74, abs=0.01)
    assert "longest gap in polling was 39.98 s with 0 polls inside" in report["verdicts"]["elicitation_gaps"]["verdict"]


def test_a_headless_client_cancelling_at_once_is_told_apart_from_an_answer() -> None:
    report = claude_code_like(answer_at=None, cancel_at=8.805).report()
    (question,) = report["questions"]
    assert question["cancelled_instead"]
    assert question["answered_by"] == "tasks/cancel, right after the question (headless client)"


def test_cancel_on_exit_names_the_live_tasks_and_what_the_server_did() -> None:
    s = Script()
    s.call(
        0.1,
        "tools/call",
        {"name": "slow", "task": {"ttl": 60000}},
        0.2,
        {"task": {"taskId": "A", "status": "working", "pollInterval": 500}},
    )
    s.call(0.7, "tasks/get", {"taskId": "A"}, 0.71, {"taskId": "A", "status": "working", "pollInterval": 500})
    s.lifecycle(1.0, "eof", dir="c2s")
    s.lifecycle(1.25, "exit", code=0, status=0)
    report = s.report()
    assert report["client_exit"]["how"] == "stdin closed" and report["client_exit"]["t"] == 1.0
    assert report["server_exit"] == {"t": 1.25, "how": "exited with code 0", "status": 0, "after_client_exit": 0.25}
    verdict = report["verdicts"]["cancel_on_exit"]
    assert verdict["live_tasks"] == ["A"] and verdict["sent"] is False
    assert verdict["verdict"] == (
        "The client went away at 1.00 s (stdin closed) with 1 live task and cancelled none; "
        "the server exited with code 0, 0.25 s later."
    )
    assert report["tasks"][0]["design"] == "mcp-2025-11-25"


def test_a_cancel_sent_before_the_client_left_counts() -> None:
    s = Script()
    s.call(0.1, "tools/call", {"name": "slow", "task": {}}, 0.2, {"task": {"taskId": "A", "status": "working"}})
    s.call(0.9, "tasks/cancel", {"taskId": "A"}, None)
    s.lifecycle(1.0, "signal", signal="SIGINT", signum=2, forwarded=True)
    verdict = s.report()["verdicts"]["cancel_on_exit"]
    assert verdict["sent"] is True and verdict["cancelled"] == ["A"]
    assert "tasks/cancel at 0.90 s" in verdict["evidence"][-1]


def test_an_a2a_client_backing_off_shows_its_pattern_and_polling_a_rejected_task_is_an_error() -> None:
    s = Script()
    headers = {"ex": 1}
    s.call(
        0.0,
        "SendMessage",
        {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "go"}]}},
        0.01,
        {"task": {"id": "R", "status": {"state": "TASK_STATE_SUBMITTED"}}},
        **headers,
    )
    times = [0.5, 1.5, 3.5, 7.5, 12.5, 17.5, 22.5]
    for n, t in enumerate(times):
        state = "TASK_STATE_WORKING" if n < 3 else "TASK_STATE_REJECTED"
        s.call(t, "GetTask", {"id": "R"}, t + 0.01, {"id": "R", "status": {"state": state}})
    report = s.report()
    (task,) = report["tasks"]
    assert task["protocol"] == "a2a" and task["design"] == "a2a-1.0" and task["applied_poll_ms"] is None
    assert task["pattern"] == "1.00, 2.00, 4.00, 5.00 ×3 s"
    assert task["final_state"] == "TASK_STATE_REJECTED"
    (finding,) = [f for f in report["findings"] if f["code"] == "poll-after-terminal"]
    assert finding["severity"] == "error" and finding["count"] == 3 and finding["times"] == [12.5, 22.5]


def test_lower_case_a2a_states_in_a_1_0_exchange_and_unknown_states_are_findings() -> None:
    s = Script()
    s.call(0.0, "GetTask", {"id": "X"}, 0.1, {"id": "X", "status": {"state": "working"}})
    s.call(1.0, "GetTask", {"id": "X"}, 1.1, {"id": "X", "status": {"state": "TASK_STATE_UNSPECIFIED"}})
    codes = {f["code"]: f for f in s.report()["findings"]}
    assert codes["a2a-0.3-state-in-1.0"]["times"] == [0.1]
    assert codes["unknown-task-state"]["times"] == [1.1]


def test_a_message_to_a_finished_task_is_a_finding_with_its_error() -> None:
    s = Script()
    s.call(0.0, "GetTask", {"id": "D"}, 0.1, {"id": "D", "status": {"state": "TASK_STATE_COMPLETED"}})
    s.call(1.0, "SendMessage", {"message": {"taskId": "D", "parts": []}}, 1.1, error={"code": -32004, "message": "x"})
    s.call(2.0, "CancelTask", {"id": "D"}, 2.1, error={"code": -32002, "message": "not cancelable"})
    findings = [f for f in s.report()["findings"] if f["code"] == "request-to-terminal-task"]
    assert [f["times"] for f in findings] == [[1.0, 1.1], [2.0, 2.1]]
    assert "error -32004" in findings[0]["message"] and "error -32002" in findings[1]["message"]


def test_a_task_handed_to_a_client_that_never_asked_for_one_is_an_error() -> None:
    s = Script()
    s.call(
        0.0, "tools/call", {"name": "x", "_meta": {}}, 0.1, {"resultType": "task", "taskId": "U", "status": "working"}
    )
    (finding,) = s.report()["findings"]
    assert finding["code"] == "task-without-client-support" and finding["times"] == [0.0, 0.1]


def test_polling_on_after_the_server_forgot_the_task_is_an_error_and_failed_runs_a_warning() -> None:
    s = Script()
    s.call(0.0, "tools/call", {"name": "x", "task": {}}, 0.1, {"task": {"taskId": "G", "status": "working"}})
    for t in (1.0, 2.0, 3.0, 4.0):
        s.call(t, "tasks/get", {"taskId": "G"}, t + 0.01, error={"code": -32602, "message": "Task not found"})
    codes = {f["code"]: f for f in s.report()["findings"]}
    assert codes["polling-unknown-task"]["times"] == [1.01, 4.0] and codes["polling-unknown-task"]["count"] == 3
    assert codes["failed-poll-run"]["times"] == [1.0, 3.0]


def test_a_tool_call_repeated_after_a_timeout_is_possible_duplicate_work() -> None:
    s = Script()
    call = {"name": "charge", "arguments": {"amount": 5}}
    s.call(0.0, "tools/call", call, 30.0, error={"code": -32001, "message": "Request timed out"})
    s.call(30.5, "tools/call", call, 31.0, {"content": []})
    s.call(40.0, "tools/call", call, 40.5, {"content": []})
    (finding,) = [f for f in s.report()["findings"] if f["code"] == "repeated-after-unknown-outcome"]
    assert finding["times"] == [0.0, 30.5]


def test_slow_and_unanswered_requests_are_findings() -> None:
    s = Script()
    s.call(0.0, "tools/call", {"name": "x", "task": {}}, 0.1, {"task": {"taskId": "S", "status": "working"}})
    s.call(1.0, "tasks/get", {"taskId": "S"}, 17.5, {"taskId": "S", "status": "working"})
    s.call(18.0, "tools/list", {}, None)
    s.lifecycle(20.0, "eof", dir="c2s")
    codes = {f["code"]: f for f in s.report()["findings"]}
    assert codes["slow-poll"]["times"] == [1.0, 17.5]
    assert codes["unanswered-request"]["times"] == [18.0] and "tools/list" in codes["unanswered-request"]["message"]


def test_a_request_sent_once_the_client_told_the_server_to_stop_is_no_unanswered_request_or_give_up() -> None:
    """A client polls on after it has sent its server SIGINT; the server ends without answering that poll.
    The poll it sent before the signal and left unanswered is still a finding."""
    s = Script()
    s.call(0.0, "tools/call", {"name": "x", "task": {}}, 0.1, {"task": {"taskId": "S", "status": "working"}})
    s.call(1.0, "tasks/get", {"taskId": "S"}, None)
    s.lifecycle(2.0, "signal", signal="SIGINT", signum=2, forwarded=True)
    s.call(2.004, "tasks/get", {"taskId": "S"}, None)
    s.lifecycle(2.02, "exit", status=0, code=0)
    analysis = Analysis()
    analysis.give_ups.client_exit = 2.05  # the session manifest's: the client exited
    for event in s.events:
        analysis.feed(event)
    analysis.exits.manifest_exit(2.05, "the client exited (session manifest)")
    report = analysis.report({"name": "t", "transport": "stdio", "started": "x"}, "test", 0).to_dict()
    found = [(f["code"], f["times"][0]) for f in valid_report(report)["findings"]]
    assert found == [("unanswered-request", 1.0), ("client-gave-up", 1.0)]


def test_an_elicitation_request_and_an_input_required_result_are_questions_too() -> None:
    s = Script()
    s.send(1.0, "s2c", {"id": "e1", "method": "elicitation/create", "params": {"message": "Which city?"}})
    s.send(4.5, "c2s", {"id": "e1", "result": {"action": "accept", "content": {"city": "Oslo"}}})
    s.call(5.0, "tools/call", {"name": "book"}, 5.1, {"resultType": "input_required", "inputRequests": {"when": {}}})
    s.call(5.12, "tools/call", {"name": "book", "inputResponses": {"when": {"action": "cancel"}}}, 5.2, {})
    questions = s.report()["questions"]
    assert [(q["kind"], q["opened"], q["closed"], q["answered_by"]) for q in questions] == [
        ("elicitation_request", 1.0, 4.5, "elicitation result: accept"),
        ("input_required_result", 5.1, 5.12, "retry with inputResponses (cancel)"),
    ]


def test_an_a2a_stream_answers_its_request_many_times_without_unanswered_findings() -> None:
    s = Script()
    s.send(0.0, "c2s", {"id": "a", "method": "SendStreamingMessage", "params": {"message": {"parts": []}}}, ex=3)
    for t, state in ((0.1, "TASK_STATE_SUBMITTED"), (0.5, "TASK_STATE_WORKING"), (0.9, "TASK_STATE_COMPLETED")):
        s.send(
            t, "s2c", {"id": "a", "result": {"statusUpdate": {"taskId": "Q", "status": {"state": state}}}}, ex=3, sse={}
        )
    s.lifecycle(1.0, "http_end", ex=3, outcome="complete")
    report = s.report()
    assert [st["state"] for st in report["tasks"][0]["states"]] == [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ]
    assert report["findings"] == []
    assert report["latency"] == [
        {"method": "SendStreamingMessage", "count": 1, "errors": 0, "p50_ms": 100.0, "p95_ms": 100.0, "max_ms": 100.0}
    ]


def test_rest_polls_count_as_polls() -> None:
    s = Script()
    for n, t in enumerate((0.0, 1.0, 2.0)):
        s.events.append(
            {
                "t": t,
                "kind": "message",
                "dir": "c2s",
                "ex": n,
                "size": 0,
                "rest": {"operation": "GetTask", "method": "GET", "path": "/tasks/Z", "taskId": "Z"},
            }
        )
        s.events.append(
            {
                "t": t + 0.01,
                "kind": "message",
                "dir": "s2c",
                "ex": n,
                "size": 9,
                "rest": {"operation": "GetTask", "method": "GET", "path": "/tasks/Z", "taskId": "Z"},
                "msg": {"id": "Z", "status": {"state": "TASK_STATE_WORKING"}},
            }
        )
    (task,) = s.report()["tasks"]
    assert task["polls"] == [0.0, 1.0, 2.0] and task["final_state"] == "TASK_STATE_WORKING"


def test_distributions_are_exact_when_small_and_close_when_large() -> None:
    small = Distribution()
    for value in (1.0, 2.0, 3.0, 4.0):
        small.add(value)
    assert (small.quantile(0.5), small.quantile(0.95)) == (2.5, 4.0)
    large, values = Distribution(), [random.Random(7).uniform(0.001, 5.0) for _ in range(EXACT_LIMIT * 3)]
    for value in values:
        large.add(value)
    values.sort()
    assert large.quantile(0.5) == pytest.approx(values[len(values) // 2], rel=0.01)
    assert large.quantile(0.95) == pytest.approx(values[int(len(values) * 0.95)], rel=0.01)


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    header = Header(transport="stdio", name="t", argv=[]).to_dict()
    path.write_bytes(b"".join(encode_event(e)[0] for e in [header, *events]))


def test_the_cli_prints_json_markdown_and_text(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    _write(path, claude_code_like(answer_at=48.78).events)
    runner = CliRunner()
    as_json = json.loads(runner.invoke(cli, ["report", str(path), "--format", "json"]).stdout)
    assert as_json["report_format"] == 1 and as_json["questions"][0]["longest_gap"] == pytest.approx(39.98)
    markdown = runner.invoke(cli, ["report", str(path), "--format", "markdown"]).stdout
    assert markdown.startswith("## wiretap report") and "| T1 | mcp (mcp-tasks-extension) |" in markdown
    text = runner.invoke(cli, ["report", str(path)]).stdout
    assert "Poll intervals" in text and "Cancel on exit" in text and "39.98" in text


def test_the_cli_refuses_what_is_not_a_recording_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n")
    result = CliRunner().invoke(cli, ["report", str(path)])
    assert result.exit_code == 2 and result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
