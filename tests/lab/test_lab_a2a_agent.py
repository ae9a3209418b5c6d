"""The lab's A2A agent without sockets: each condition, on a clock the test moves by hand."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest

from wiretap.lab.a2a.agent import A2AAgent, Exit, Handled, Request
from wiretap.lab.a2a.conditions import NAMES, condition_of

BASE = "http://127.0.0.1:9"


def rpc(agent: A2AAgent, method: str, params: dict[str, Any], now: float) -> tuple[Handled, dict[str, Any]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()
    handled = agent.handle(Request("POST", "/a2a/jsonrpc", body), now)
    assert handled.answer is not None
    return handled, json.loads(handled.answer.body)


def send(agent: A2AAgent, text: str, now: float, *, blocking: bool = False, **message: Any) -> dict[str, Any]:
    params = {
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}], **message},
        "configuration": {"returnImmediately": not blocking},
    }
    return rpc(agent, "SendMessage", params, now)[1]


def state(agent: A2AAgent, task_id: str, now: float) -> tuple[float, str]:
    handled, body = rpc(agent, "GetTask", {"id": task_id}, now)
    assert handled.answer is not None
    return handled.answer.at, body["result"]["status"]["state"]


def test_a_message_names_its_condition_by_its_first_word_or_by_metadata() -> None:
    text = {"parts": [{"text": "silent 120 after 1.5"}]}
    assert (condition_of(text).name, condition_of(text).seconds, condition_of(text).after) == ("silent", 120, 1.5)
    meta = {"parts": [{"text": "anything"}], "metadata": {"condition": "crash", "seconds": 4}}
    assert (condition_of(meta).name, condition_of(meta).seconds) == ("crash", 4)
    assert condition_of({"parts": [{"text": "book me a flight"}]}).name == "slow"
    assert condition_of({"parts": [{"text": "reject out of scope"}]}).reason == "out of scope"


def test_the_card_lists_every_condition_as_a_skill_on_both_bindings() -> None:
    handled = A2AAgent(BASE).handle(Request("GET", "/.well-known/agent-card.json"), 0.0)
    assert handled.answer is not None and handled.answer.status == 200
    card = json.loads(handled.answer.body)
    assert {skill["id"] for skill in card["skills"]} == NAMES
    assert all(skill["description"] and skill["examples"] for skill in card["skills"])
    assert [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", f"{BASE}/a2a/jsonrpc"),
        ("HTTP+JSON", f"{BASE}/a2a/rest"),
    ]


def test_a_slow_task_works_for_its_seconds_then_completes() -> None:
    agent = A2AAgent(BASE)
    task = send(agent, "slow 2", 10.0)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    assert state(agent, task["id"], 11.999) == (11.999, "TASK_STATE_WORKING")
    assert state(agent, task["id"], 12.0) == (12.0, "TASK_STATE_COMPLETED")


def test_a_blocking_send_of_a_slow_task_is_answered_when_it_completes() -> None:
    agent = A2AAgent(BASE)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": [{"text": "slow 3"}]}}}
    )
    handled = agent.handle(Request("POST", "/a2a/jsonrpc", body.encode()), 5.0)
    assert handled.answer is not None and handled.answer.at == 8.0
    assert json.loads(handled.answer.body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_silent_task_holds_every_get_task_of_its_silence_until_the_silence_ends() -> None:
    agent = A2AAgent(BASE)
    task = send(agent, "silent 10 after 1", 0.0)["result"]["task"]
    assert state(agent, task["id"], 0.5) == (0.5, "TASK_STATE_WORKING")
    assert state(agent, task["id"], 1.0) == (11.0, "TASK_STATE_COMPLETED")
    assert state(agent, task["id"], 7.25) == (11.0, "TASK_STATE_COMPLETED")
    assert state(agent, task["id"], 11.0) == (11.0, "TASK_STATE_COMPLETED")


def test_a_rejected_task_ends_at_once_with_its_reason_byte_for_byte() -> None:
    agent = A2AAgent(BASE)
    handled, _ = rpc(agent, "SendMessage", {"message": {"messageId": "m", "parts": [{"text": "reject no"}]}}, 1.0)
    assert handled.answer is not None
    assert handled.answer.body == (
        b'{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"lab-task-1","contextId":"lab-context-1","status":'
        b'{"state":"TASK_STATE_REJECTED","message":{"messageId":"lab-task-1-status","role":"ROLE_AGENT","parts":'
        b'[{"text":"no"}],"taskId":"lab-task-1","contextId":"lab-context-1"}},"history":[{"messageId":"m","parts":'
        b'[{"text":"reject no"}]}],"metadata":{"condition":"reject"}}}}'
    )


def test_a_failing_artifact_task_completes_with_a_summary_that_reports_one_failure() -> None:
    task = send(A2AAgent(BASE), "failing-artifact", 0.0)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    [artifact] = task["artifacts"]
    assert artifact["name"] == "summary.json"
    assert artifact["parts"][0]["data"] == {"tests": 4, "passed": 3, "failed": 1}


@pytest.mark.parametrize("condition", ["input-required", "auth-required"])
def test_an_interrupted_task_asks_then_completes_on_a_follow_up_message(condition: str) -> None:
    agent = A2AAgent(BASE)
    task = send(agent, condition, 0.0)["result"]["task"]
    assert task["status"]["state"] == f"TASK_STATE_{condition.upper().replace('-', '_')}"
    assert task["status"]["message"]["parts"][0]["text"]
    answered = send(agent, "Paris", 1.0, taskId=task["id"])["result"]["task"]
    assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(answered["history"]) == 2


def test_a_crash_task_is_accepted_and_the_agent_exits_at_its_seconds() -> None:
    agent = A2AAgent(BASE)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": {"message": {"parts": [{"text": "crash 2.5"}]}}})  # fmt: skip
    handled = agent.handle(Request("POST", "/a2a/jsonrpc", body.encode()), 4.0)
    assert handled.exit == Exit(6.5, 1)
    assert handled.answer is not None and handled.answer.at == 4.0


def test_a_finished_task_refuses_messages_with_32004_cancels_with_32002_and_unknown_ids_with_32001() -> None:
    agent = A2AAgent(BASE)
    task = send(agent, "done", 0.0)["result"]["task"]
    assert send(agent, "more", 1.0, taskId=task["id"])["error"]["code"] == -32004
    assert rpc(agent, "CancelTask", {"id": task["id"]}, 1.0)[1]["error"]["code"] == -32002
    missing = rpc(agent, "GetTask", {"id": "nope"}, 1.0)[1]["error"]
    assert missing["code"] == -32001 and missing["data"][0]["reason"] == "TASK_NOT_FOUND"


def test_a_working_task_is_cancelled() -> None:
    agent = A2AAgent(BASE)
    task = send(agent, "slow 9", 0.0)["result"]["task"]
    assert rpc(agent, "CancelTask", {"id": task["id"]}, 1.0)[1]["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert state(agent, task["id"], 20.0)[1] == "TASK_STATE_CANCELED"


def test_0_3_method_names_are_answered_in_0_3_shapes() -> None:
    agent = A2AAgent(BASE)
    message = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "slow 1"}]}
    params = {"message": message, "configuration": {"blocking": False}}
    task = rpc(agent, "message/send", params, 0.0)[1]["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "working")
    got = rpc(agent, "tasks/get", {"id": task["id"]}, 1.0)[1]["result"]
    assert got["status"]["state"] == "completed" and got["artifacts"][0]["parts"][0]["kind"] == "text"
    assert "data" not in rpc(agent, "tasks/get", {"id": "nope"}, 1.0)[1]["error"]


def test_the_rest_binding_answers_send_get_and_cancel_and_google_rpc_status_errors() -> None:
    agent = A2AAgent(BASE)
    sent = agent.handle(Request("POST", "/a2a/rest/message:send", b'{"message":{"parts":[{"text":"slow 5"}]}}'), 0.0)
    assert sent.answer is not None and sent.answer.content_type == "application/a2a+json"
    task_id = json.loads(sent.answer.body)["task"]["id"]
    got = agent.handle(Request("GET", f"/a2a/rest/v1/tasks/{task_id}"), 1.0)
    assert got.rpc == "GetTask" and got.answer is not None
    assert json.loads(got.answer.body)["status"]["state"] == "TASK_STATE_WORKING"
    cancelled = agent.handle(Request("POST", f"/a2a/rest/tasks/{task_id}:cancel"), 2.0)
    assert (
        cancelled.answer is not None and json.loads(cancelled.answer.body)["status"]["state"] == "TASK_STATE_CANCELED"
    )
    again = agent.handle(Request("POST", f"/a2a/rest/tasks/{task_id}:cancel"), 3.0)
    assert again.answer is not None and again.answer.status == 400
    assert json.loads(again.answer.body)["error"]["details"][0]["reason"] == "TASK_NOT_CANCELABLE"
    missing = agent.handle(Request("GET", "/a2a/rest/tasks/nope"), 3.0)
    assert missing.answer is not None and missing.answer.status == 404


def test_streaming_is_refused_as_unsupported_and_batches_as_invalid() -> None:
    agent = A2AAgent(BASE)
    assert rpc(agent, "SendStreamingMessage", {"message": {}}, 0.0)[1]["error"]["code"] == -32004
    batch = agent.handle(Request("POST", "/a2a/jsonrpc", b"[]"), 0.0)
    assert batch.answer is not None and json.loads(batch.answer.body)["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("address", "said"),
    [("192.0.2.1:8765", "loopback only"), ("127.0.0.1:http", "expected HOST:PORT"), ("[::1]:70000", "0–65535")],
)
def test_the_lab_agent_refuses_an_address_off_loopback_or_malformed_in_one_line_with_status_2(
    address: str, said: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiretap", "lab", "serve", "--a2a", "--http", address],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and said in done.stderr and address in done.stderr


def test_the_lab_agent_says_in_one_line_with_status_3_that_its_port_is_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        done = subprocess.run(
            [sys.executable, "-m", "wiretap", "lab", "serve", "--a2a", "--http", address],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and f"--http {address}: cannot listen there" in done.stderr
