"""An A2A task's poll schedule, its give-up point and the rejected and failing-result findings, from
hand-written recordings whose every time is known."""

from __future__ import annotations

import base64
import json
from typing import Any

from wiretap.analysis.outcomes import failing_artifact
from wiretap.analysis.report import Analysis


class Wire:
    """Writes the events ``wiretap proxy`` records for one JSON-RPC exchange per connection."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.ex = 0

    def call(self, t: float, method: str, params: dict[str, Any], answer: tuple[float, Any] | None,
             half_closed: float | None = None, ended: float | None = None) -> None:  # fmt: skip
        self.ex += 1
        ex = self.ex
        msg = {"jsonrpc": "2.0", "id": ex, "method": method, "params": params}
        self.events += [
            {"t": t, "kind": "connection", "conn": ex, "state": "open"},
            {"t": t, "kind": "http_request", "ex": ex, "conn": ex, "method": "POST", "path": "/a2a/jsonrpc"},
            {"t": t, "kind": "message", "dir": "c2s", "ex": ex, "msg": msg},
        ]
        if half_closed is not None:
            self.events.append({"t": half_closed, "kind": "connection", "conn": ex, "state": "half_closed"})
        if answer is not None:
            at, result = answer
            self.events += [
                {"t": at, "kind": "http_response", "ex": ex, "status": 200},
                {
                    "t": at,
                    "kind": "message",
                    "dir": "s2c",
                    "ex": ex,
                    "msg": {"jsonrpc": "2.0", "id": ex, "result": result},
                },
                {"t": at, "kind": "http_end", "ex": ex, "outcome": "complete"},
            ]
        elif ended is not None:
            self.events.append({"t": ended, "kind": "http_end", "ex": ex, "outcome": "client_disconnected"})

    def report(self) -> dict[str, Any]:
        analysis = Analysis("http")
        for event in sorted(self.events, key=lambda e: e["t"]):
            analysis.feed(event)
        return analysis.report({"transport": "http"}, "hand-written", 0).to_dict()


def task(state: str, **more: Any) -> dict[str, Any]:
    return {"id": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}", **more}}


def test_steps_run_from_each_polls_end_and_the_give_up_is_the_last_poll_abandoned_with_none_after() -> None:
    wire = Wire()
    wire.call(0.0, "SendMessage", {"message": {"parts": [{"text": "silent"}]}}, (0.010, {"task": task("WORKING")}))
    wire.call(0.510, "GetTask", {"id": "t1"}, (0.512, task("WORKING")))
    wire.call(1.512, "GetTask", {"id": "t1"}, None, half_closed=16.512)
    wire.call(18.512, "GetTask", {"id": "t1"}, None, half_closed=33.512, ended=40.0)
    schedule = wire.report()["tasks"][0]["poll_schedule"]
    assert [(s["t"], s["gap"], s["step"], s["waited"], s["outcome"]) for s in schedule["steps"]] == [
        (0.51, None, 0.5, 0.002, "answered"),
        (1.512, 1.002, 1.0, 15.0, "abandoned"),
        (18.512, 17.0, 2.0, 15.0, "abandoned"),
    ]
    assert schedule["back_off"] == "0.50, 1.00, 2.00 s"
    assert (schedule["failed"], schedule["longest_failed_run"], schedule["failed_before_giving_up"]) == (2, 2, 2)
    assert (schedule["last_poll_at"], schedule["gave_up_at"]) == (18.512, 33.512)


def test_a_client_that_closes_its_connection_without_half_closing_abandons_the_poll_when_it_ends() -> None:
    wire = Wire()
    wire.call(0.0, "SendMessage", {"message": {}}, (0.0, {"task": task("WORKING")}))
    wire.call(1.0, "GetTask", {"id": "t1"}, None, ended=3.5)
    [step] = wire.report()["tasks"][0]["poll_schedule"]["steps"]
    assert (step["waited"], step["outcome"]) == (2.5, "abandoned")


def test_a_task_that_ended_is_not_given_up_on_and_answered_polls_count_no_failure() -> None:
    wire = Wire()
    wire.call(0.0, "SendMessage", {"message": {}}, (0.0, {"task": task("WORKING")}))
    wire.call(1.0, "GetTask", {"id": "t1"}, (1.0, task("WORKING")))
    wire.call(2.0, "GetTask", {"id": "t1"}, (2.0, task("COMPLETED")))
    report = wire.report()
    schedule = report["tasks"][0]["poll_schedule"]
    assert (schedule["failed"], schedule["gave_up_at"], schedule["failed_before_giving_up"]) == (0, None, None)
    assert "gave up on no task" in report["verdicts"]["a2a_back_off"]["verdict"]


def test_a_rejected_task_is_a_finding_naming_its_reason_once() -> None:
    wire = Wire()
    reason = {"message": {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": "out of scope"}]}}
    wire.call(0.0, "SendMessage", {"message": {}}, (0.1, {"task": task("REJECTED", **reason)}))
    wire.call(1.0, "GetTask", {"id": "t1"}, (1.0, task("REJECTED", **reason)))
    rejected = [f for f in wire.report()["findings"] if f["code"] == "task-rejected"]
    assert [(f["times"], f["task"], f["count"]) for f in rejected] == [([0.1], "t1", 1)]
    assert "'out of scope'" in rejected[0]["message"]


def test_a_completed_task_whose_summary_says_failed_is_a_finding_and_one_that_passed_is_not() -> None:
    for failed, expected in ((1, ["completed-with-failing-artifact"]), (0, [])):
        wire = Wire()
        summary = {"artifactId": "a", "name": "summary.json", "parts": [{"data": {"passed": 3, "failed": failed}}]}
        wire.call(0.0, "SendMessage", {"message": {}}, (0.2, {"task": task("COMPLETED") | {"artifacts": [summary]}}))
        assert [f["code"] for f in wire.report()["findings"]] == expected


def test_failure_is_read_from_data_json_text_and_base64_files() -> None:
    as_file = base64.b64encode(json.dumps({"ok": False}).encode()).decode()
    for part, said in (
        ({"data": {"errors": 2}}, '"errors": 2'),
        ({"text": '{"failed": 1}'}, '"failed": 1'),
        ({"raw": as_file, "filename": "summary.json"}, '"ok": false'),
        ({"kind": "file", "file": {"bytes": as_file}}, '"ok": false'),
    ):
        assert failing_artifact({"artifacts": [{"name": "summary.json", "parts": [part]}]}) == ("summary.json", said)
    assert failing_artifact({"artifacts": [{"name": "r", "parts": [{"text": "all 4 failed to fail"}]}]}) is None


def test_a_report_of_a2a_tasks_only_states_no_claude_code_poll_rule() -> None:
    wire = Wire()
    wire.call(0.0, "SendMessage", {"message": {}}, (0.0, {"task": task("WORKING")}))
    wire.call(1.0, "GetTask", {"id": "t1"}, (1.0, task("COMPLETED")))
    rule = wire.report()["poll_rule"]
    assert "Claude Code" not in rule and rule.startswith("A2A has no poll interval")
