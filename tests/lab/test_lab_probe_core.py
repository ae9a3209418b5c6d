"""The lab's probe MCP server without sockets: each condition in both revisions, byte by byte, on a clock
the test moves by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wiretap.lab.conditions import CONDITIONS, LAB_META
from wiretap.lab.probe.core import Output, Probe
from wiretap.lab.probe.shapes import FORM_KEY, ROOTS_KEY, TASKS_EXT

WALL = 1_796_300_000.0
CREATED = "2026-12-03T12:13:20.000Z"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXT: {}}},
}
PLAIN_META = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": {}}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def request(rid: Any, method: str, **params: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def legacy() -> Probe:
    probe = Probe(wall_offset=WALL)
    out = probe.receive(request(0, "initialize", protocolVersion="2025-11-25", capabilities={}), 0.0)
    assert json.loads(out.sends[0].line)["result"]["protocolVersion"] == "2025-11-25"
    return probe


def sent(out: Output) -> list[dict[str, Any]]:
    return [json.loads(s.line) for s in out.sends]


def only(out: Output) -> dict[str, Any]:
    [message] = sent(out)
    return message


def test_a_legacy_task_call_gets_the_nested_task_with_the_interval_asked_byte_for_byte() -> None:
    probe = legacy()
    call = request(1, "tools/call", name="poll_task", arguments={"interval_ms": 100, "seconds": 2}, task={"ttl": 60000})
    out = probe.receive(call, 0.0)
    lab = (
        '{"condition":"poll-interval","tool":"poll_task","settings":{"interval_ms":100,"seconds":2},'
        '"answer":"task","revision":"2025-11-25","task":"lab-1-poll-interval"}'
    )
    assert [s.line for s in out.sends] == [
        b'{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"lab-1-poll-interval","status":"working",'
        b'"createdAt":"' + CREATED.encode() + b'","lastUpdatedAt":"' + CREATED.encode() + b'",'
        b'"ttl":60000,"pollInterval":100},"_meta":{"wiretap/lab":' + lab.encode() + b"}}}\n"
    ]
    assert out.sends[0].related == 1 and out.sends[0].ends
    assert probe.next_due() == 2.0


def test_a_legacy_task_completes_on_time_with_a_status_notification_and_tasks_result_answers() -> None:
    probe = legacy()
    call = request(1, "tools/call", name="poll_task", arguments={"seconds": 2}, task={})
    created = only(probe.receive(call, 0.0))["result"]["task"]
    assert "pollInterval" not in created  # none given: none asked
    assert created["ttl"] == 3_600_000
    held = probe.receive(request(2, "tasks/result", taskId="lab-1-poll-interval"), 0.5)
    assert held.sends == []
    assert probe.tick(1.999).sends == []
    done = probe.tick(2.0)
    status, result = sent(done)
    assert status["method"] == "notifications/tasks/status" and status["params"]["status"] == "completed"
    assert status["params"]["lastUpdatedAt"] == "2026-12-03T12:13:22.000Z"
    assert result["id"] == 2
    assert result["result"]["content"] == [{"type": "text", "text": "poll_task: completed after 2 s"}]
    assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": "lab-1-poll-interval"}
    assert done.sends[0].related == done.sends[1].related == 2  # both on the held tasks/result stream


def test_a_modern_call_with_the_extension_gets_a_flat_task_and_polls_inline_the_result_byte_for_byte() -> None:
    probe = Probe(wall_offset=WALL)
    call = request(
        "c1", "tools/call", name="poll_task", arguments={"interval_ms": 250, "seconds": 1}, _meta=MODERN_META
    )
    created = probe.receive(call, 0.0).sends[0].line
    assert created.startswith(
        b'{"jsonrpc":"2.0","id":"c1","result":{"resultType":"task","taskId":"lab-1-poll-interval","status":"working",'
        b'"createdAt":"2026-12-03T12:13:20.000Z","lastUpdatedAt":"2026-12-03T12:13:20.000Z","ttlMs":3600000,'
        b'"pollIntervalMs":250,"_meta":{"wiretap/lab":{"condition":"poll-interval"'
    )
    assert b'"revision":"2026-07-28"' in created
    working = only(probe.receive(request(2, "tasks/get", taskId="lab-1-poll-interval"), 0.25))["result"]
    assert working["resultType"] == "complete" and working["status"] == "working" and "result" not in working
    probe.tick(1.0)
    done = only(probe.receive(request(3, "tasks/get", taskId="lab-1-poll-interval"), 1.25))["result"]
    assert done["status"] == "completed" and done["pollIntervalMs"] == 250
    assert done["result"]["content"][0]["text"] == "poll_task: completed after 1 s"
    assert done["result"]["_meta"][LAB_META]["settings"] == {"interval_ms": 250, "seconds": 1}


@pytest.mark.parametrize("modern", [True, False])
def test_a_call_that_asks_for_no_task_is_answered_inline_after_its_seconds(modern: bool) -> None:
    probe = Probe(wall_offset=WALL) if modern else legacy()
    params: dict[str, Any] = {"name": "poll_task", "arguments": {"seconds": 3}}
    if modern:
        params["_meta"] = PLAIN_META
    out = probe.receive(request(5, "tools/call", **params), 10.0)
    assert out.sends == [] and probe.next_due() == 13.0
    answer = only(probe.tick(13.0))
    assert answer["id"] == 5 and ("resultType" in answer["result"]) is modern
    assert answer["result"]["content"][0]["text"] == "poll_task: answered inline after 3 s"
    assert answer["result"]["_meta"][LAB_META]["answer"] == "inline"
    assert probe.tasks == {}


def test_modern_input_task_lists_the_form_and_roots_then_one_update_completes_it() -> None:
    probe = Probe(wall_offset=WALL)
    probe.receive(request(1, "tools/call", name="input_task", arguments={"after_s": 1}, _meta=MODERN_META), 0.0)
    task_id = "lab-1-input-required"
    assert only(probe.receive(request(2, "tasks/get", taskId=task_id), 0.5))["result"]["status"] == "working"
    [logged] = probe.tick(1.0).log
    assert logged == {"event": "task", "task": task_id, "state": "input_required", "condition": "input-required"}
    asking = only(probe.receive(request(3, "tasks/get", taskId=task_id), 1.5))["result"]
    assert asking["status"] == "input_required" and asking["pollIntervalMs"] == 500
    assert sorted(asking["inputRequests"]) == [FORM_KEY, ROOTS_KEY]
    form = asking["inputRequests"][FORM_KEY]
    assert form["method"] == "elicitation/create" and "id" not in form and "jsonrpc" not in form
    assert sorted(form["params"]["requestedSchema"]["properties"]) == ["confirm", "environment"]
    assert asking["inputRequests"][ROOTS_KEY] == {"method": "roots/list", "params": {}}
    # One key answered: still input_required, asking only for the other.
    partial = {FORM_KEY: {"action": "accept", "content": {"environment": "staging", "confirm": True}}}
    ack = only(probe.receive(request(4, "tasks/update", taskId=task_id, inputResponses=partial), 2.0))
    assert ack["result"]["resultType"] == "complete"
    again = only(probe.receive(request(5, "tasks/get", taskId=task_id), 2.25))["result"]
    assert list(again["inputRequests"]) == [ROOTS_KEY]
    roots = {ROOTS_KEY: {"roots": [{"uri": "file:///project"}]}}
    update = probe.receive(request(6, "tasks/update", taskId=task_id, inputResponses=roots), 2.5)
    assert [e.get("state") for e in update.log if e["event"] == "task"] == ["completed"]
    done = only(probe.receive(request(7, "tasks/get", taskId=task_id), 2.75))["result"]
    assert done["status"] == "completed" and "inputRequests" not in done
    assert (
        '"confirm":true' in done["result"]["content"][0]["text"]
        and "file:///project" in done["result"]["content"][0]["text"]
    )


def test_legacy_input_task_asks_on_the_held_tasks_result_stream_and_answers_it_when_both_are_answered() -> None:
    probe = legacy()
    probe.receive(request(1, "tools/call", name="input_task", arguments={"after_s": 1}, task={}), 0.0)
    task_id = "lab-1-input-required"
    assert probe.receive(request(2, "tasks/result", taskId=task_id), 0.1).sends == []
    out = probe.tick(1.0)
    status, form, roots = sent(out)
    assert status["method"] == "notifications/tasks/status" and status["params"]["status"] == "input_required"
    assert form["method"] == "elicitation/create" and form["id"] == "lab-ask-1"
    assert roots == {"jsonrpc": "2.0", "id": "lab-ask-2", "method": "roots/list",
                     "params": {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}}}}  # fmt: skip
    assert form["params"]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
    assert [s.related for s in out.sends] == [2, 2, 2]
    answer = line({"jsonrpc": "2.0", "id": "lab-ask-1", "result": {"action": "accept", "content": {"confirm": True}}})
    assert probe.receive(answer, 1.2).sends == []
    error = line({"jsonrpc": "2.0", "id": "lab-ask-2", "error": {"code": -32601, "message": "no roots"}})
    working, completed, result = sent(probe.receive(error, 1.3))
    assert [working["params"]["status"], completed["params"]["status"]] == ["working", "completed"]
    assert result["id"] == 2 and "no roots" in result["result"]["content"][0]["text"]


def test_legacy_input_task_polled_to_input_required_asks_when_tasks_result_comes() -> None:
    probe = legacy()
    probe.receive(request(1, "tools/call", name="input_task", arguments={"after_s": 1}, task={}), 0.0)
    probe.tick(1.0)
    assert only(probe.receive(request(2, "tasks/get", taskId="lab-1-input-required"), 1.5))["result"]["status"] == (
        "input_required"
    )
    asks = sent(probe.receive(request(3, "tasks/result", taskId="lab-1-input-required"), 1.6))
    assert [a["method"] for a in asks] == ["elicitation/create", "roots/list"]


def test_an_inline_input_task_asks_legacy_clients_with_requests_and_modern_ones_with_input_required() -> None:
    old = legacy()
    old.receive(request(1, "tools/call", name="input_task", arguments={"after_s": 1}), 0.0)
    out = old.tick(1.0)
    assert [m["method"] for m in sent(out)] == ["elicitation/create", "roots/list"]
    assert [s.related for s in out.sends] == [1, 1] and "_meta" not in sent(out)[1]["params"]
    old.receive(line({"jsonrpc": "2.0", "id": "lab-ask-1", "result": {"action": "decline"}}), 1.1)
    answer = only(old.receive(line({"jsonrpc": "2.0", "id": "lab-ask-2", "result": {"roots": []}}), 1.2))
    assert answer["id"] == 1 and '"action":"decline"' in answer["result"]["content"][0]["text"]

    new = Probe(wall_offset=WALL)
    new.receive(request(1, "tools/call", name="input_task", arguments={"after_s": 1}, _meta=PLAIN_META), 0.0)
    asked = only(new.tick(1.0))["result"]
    assert asked["resultType"] == "input_required" and sorted(asked["inputRequests"]) == [FORM_KEY, ROOTS_KEY]
    responses = {FORM_KEY: {"action": "cancel"}, ROOTS_KEY: {"roots": []}}
    retry = request(2, "tools/call", name="input_task", arguments={"after_s": 1}, _meta=PLAIN_META,
                    inputResponses=responses, requestState=asked["requestState"])  # fmt: skip
    done = only(new.receive(retry, 1.5))["result"]
    assert done["resultType"] == "complete" and '"action":"cancel"' in done["content"][0]["text"]


@pytest.mark.parametrize("modern", [True, False])
def test_a_forgotten_task_is_answered_not_found_after_its_seconds(modern: bool) -> None:
    probe = Probe(wall_offset=WALL) if modern else legacy()
    extra: dict[str, Any] = {"_meta": MODERN_META} if modern else {"task": {}}
    probe.receive(request(1, "tools/call", name="forgotten_task", arguments={"forget_after_s": 3}, **extra), 0.0)
    get = request(2, "tasks/get", taskId="lab-1-forgotten-task")
    assert only(probe.receive(get, 2.9))["result"]["status"] == "working"
    [logged] = probe.tick(3.0).log
    assert logged["event"] == "forgotten"
    assert probe.receive(get, 3.5).sends[0].line == (
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}\n'
    )
    assert probe.end("eof") == {"event": "end", "how": "eof", "live_tasks": []}


def test_failing_polls_fail_with_internal_error_then_the_task_answers() -> None:
    probe = Probe(wall_offset=WALL)
    arguments = {"failures": 2, "seconds": 1, "interval_ms": 200}
    probe.receive(request(1, "tools/call", name="failing_polls_task", arguments=arguments, _meta=MODERN_META), 0.0)
    answers = [only(probe.receive(request(n, "tasks/get", taskId="lab-1-failing-polls"), n * 0.2)) for n in (1, 2, 3)]
    assert [a.get("error", {}).get("code") for a in answers] == [-32603, -32603, None]
    assert answers[0]["error"]["message"] == "Internal error: task store unavailable"
    assert answers[1]["error"]["data"][LAB_META]["failed_poll"] == 2
    assert answers[2]["result"]["status"] == "working"
    probe.tick(1.0)
    assert only(probe.receive(request(4, "tasks/get", taskId="lab-1-failing-polls"), 1.2))["result"]["status"] == (
        "completed"
    )


def test_an_endless_task_runs_until_cancelled_and_a_second_legacy_cancel_is_refused() -> None:
    probe = legacy()
    probe.receive(request(1, "tools/call", name="endless_task", arguments={}, task={}), 0.0)
    assert probe.next_due() is None
    assert probe.end("SIGINT") == {"event": "end", "how": "SIGINT", "live_tasks": ["lab-1-until-cancelled"]}
    status, cancelled = sent(probe.receive(request(2, "tasks/cancel", taskId="lab-1-until-cancelled"), 9.0))
    assert status["params"]["status"] == cancelled["result"]["status"] == "cancelled"
    again = only(probe.receive(request(3, "tasks/cancel", taskId="lab-1-until-cancelled"), 9.0))
    assert again["error"] == {"code": -32602, "message": "Cannot cancel task: already in terminal status 'cancelled'"}


def test_a_modern_cancel_is_acknowledged_twice_in_the_same_tick() -> None:
    probe = Probe(wall_offset=WALL)
    probe.receive(request(1, "tools/call", name="endless_task", arguments={}, _meta=MODERN_META), 0.0)
    cancel = request(2, "tasks/cancel", taskId="lab-1-until-cancelled")
    first, second = only(probe.receive(cancel, 5.0)), only(probe.receive(cancel, 5.0))
    assert first["result"]["resultType"] == second["result"]["resultType"] == "complete"
    assert set(first["result"]) == {"resultType", "_meta"}
    assert probe.tasks["lab-1-until-cancelled"].state == "cancelled"
    assert only(probe.receive(request(3, "tasks/get", taskId="lab-1-until-cancelled"), 5.1))["result"]["status"] == (
        "cancelled"
    )


def test_progress_notifications_go_on_the_calls_stream_one_every_interval_then_the_answer() -> None:
    probe = legacy()
    call = request(
        1, "tools/call", name="progress_call", arguments={"count": 3, "every_s": 0.5}, _meta={"progressToken": "p"}
    )
    probe.receive(call, 0.0)
    times, messages = [], []
    while (due := probe.next_due()) is not None:
        out = probe.tick(due)
        times += [due] * len(out.sends)
        messages += sent(out)
        assert all(s.related == 1 for s in out.sends)
    assert times == [0.5, 1.0, 1.5, 1.5]
    assert [m.get("params", {}).get("progress") for m in messages[:3]] == [1, 2, 3]
    assert messages[0]["params"] == {"progressToken": "p", "progress": 1, "total": 3, "message": "step 1/3"}
    assert messages[3]["id"] == 1


def test_a_call_without_a_progress_token_gets_no_notifications_and_a_cancelled_call_no_answer() -> None:
    probe = legacy()
    probe.receive(request(1, "tools/call", name="progress_call", arguments={"count": 2, "every_s": 1}), 0.0)
    assert sent(probe.tick(2.0))[0]["id"] == 1
    probe.receive(request(2, "tools/call", name="slow_call", arguments={"seconds": 5}), 3.0)
    cancelled = probe.receive(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}), 4.0
    )
    assert cancelled.log[-1] == {"event": "call-cancelled", "id": 2}
    assert probe.tick(8.0).sends == []


def test_an_inline_tool_refuses_a_legacy_task_augmented_call() -> None:
    out = legacy().receive(request(1, "tools/call", name="slow_call", arguments={}, task={}), 0.0)
    assert only(out)["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"not json", -32700),
        (b"[1,2]", -32600),
        (request(1, "nope/nothing"), -32601),
        (request(1, "tools/call", name="no_such_tool"), -32602),
        (request(1, "tasks/get", taskId="lab-99-nothing"), -32602),
        (request(1, "tools/list", _meta={"io.modelcontextprotocol/protocolVersion": "1900-01-01"}), -32022),
    ],
)
def test_bad_requests_get_the_spec_error_code(raw: bytes, code: int) -> None:
    assert only(legacy().receive(raw, 0.0))["error"]["code"] == code


def test_bad_arguments_are_a_tool_error_naming_the_tool_and_the_argument() -> None:
    out = legacy().receive(request(1, "tools/call", name="poll_task", arguments={"seconds": -1}), 0.0)
    result = only(out)["result"]
    assert result["isError"] is True and "poll_task: seconds must be" in result["content"][0]["text"]


def test_the_tool_list_is_the_conditions_with_task_support_only_for_legacy_clients() -> None:
    old = only(legacy().receive(request(1, "tools/list"), 0.0))["result"]["tools"]
    new = only(Probe().receive(request(1, "tools/list", _meta=MODERN_META), 0.0))["result"]
    assert [t["name"] for t in old] == [t["name"] for t in new["tools"]] == [c.tool for c in CONDITIONS]
    assert {t["name"]: t["execution"]["taskSupport"] for t in old}["slow_call"] == "forbidden"
    assert {t["name"]: t["execution"]["taskSupport"] for t in old}["poll_task"] == "optional"
    assert new["resultType"] == "complete" and all("execution" not in t for t in new["tools"])
    assert new["tools"][0]["description"] == CONDITIONS[0].description


def test_discover_states_both_revisions_and_the_tasks_extension_and_listen_is_acknowledged_and_held() -> None:
    probe = Probe()
    found = only(probe.receive(request("d", "server/discover", _meta=PLAIN_META), 0.0))["result"]
    assert found["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert found["capabilities"]["extensions"] == {TASKS_EXT: {}}
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "wiretap-lab"
    listen = probe.receive(request("listen:0", "subscriptions/listen", _meta=PLAIN_META, notifications={}), 0.0)
    [ack] = listen.sends
    assert json.loads(ack.line)["method"] == "notifications/subscriptions/acknowledged"
    assert ack.related == "listen:0" and not ack.ends
