"""The fake Messages API that the Claude Code tests script: it must answer as the real one would."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from scenarios.fake_messages_api import FakeMessagesAPI, ToolUse, background_task_id, stop_use_id, tool_use_id

TOOL = "mcp__demo__echo"
TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": TOOL, "input_schema": {}}]


def post(api: FakeMessagesAPI, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        api.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def from_sse(data: bytes) -> dict[str, Any]:
    """Rebuild the message from its server-sent events, as an SDK would."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for chunk in data.decode().split("\n\n"):
        if not chunk:
            continue
        name, payload = chunk.split("\n")
        event = json.loads(payload.removeprefix("data: "))
        assert name == f"event: {event['type']}"
        delta = event.get("delta", {})
        if event["type"] == "message_start":
            message = event["message"]
        elif event["type"] == "content_block_start":
            message["content"].append(event["content_block"])
        elif delta.get("type") == "text_delta":
            message["content"][event["index"]]["text"] += delta["text"]
        elif delta.get("type") == "input_json_delta":
            partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif event["type"] == "message_delta":
            message["stop_reason"] = delta["stop_reason"]
    for index, text in partial.items():
        message["content"][index]["input"] = json.loads(text)
    return message


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_the_first_turn_calls_the_scripted_tool_and_a_tool_result_gets_the_final_text() -> None:
    with FakeMessagesAPI([ToolUse(TOOL, {"text": "hé"})]) as api:
        _, first = post(api, "/v1/messages?beta=true", {"tools": TOOLS, "messages": [user("go")]})
        call = json.loads(first)
        assert call["stop_reason"] == "tool_use"
        assert call["content"] == [{"type": "tool_use", "id": tool_use_id(0), "name": TOOL, "input": {"text": "hé"}}]
        result = {
            "type": "tool_result",
            "tool_use_id": tool_use_id(0),
            "content": [{"type": "text", "text": "hé"}],
        }
        turn = [user("go"), {"role": "assistant", "content": call["content"]}, user([result])]
        _, second = post(api, "/v1/messages?beta=true", {"tools": TOOLS, "messages": turn})
        final = json.loads(second)
        assert final["stop_reason"] == "end_turn"
        assert "hé" in final["content"][0]["text"]
        assert api.tool_results() == [result]


def test_a_streamed_answer_carries_the_same_message_as_server_sent_events() -> None:
    with FakeMessagesAPI([ToolUse(TOOL, {"text": "a\nb"})]) as api:
        body = {"tools": TOOLS, "messages": [user("go")]}
        kind, data = post(api, "/v1/messages", {**body, "stream": True})
        assert kind == "text/event-stream"
        streamed = from_sse(data)
        plain = json.loads(post(api, "/v1/messages", body)[1])
        assert streamed["content"] == plain["content"]
        assert streamed["stop_reason"] == plain["stop_reason"] == "tool_use"


def test_side_requests_get_short_text_and_token_counts_get_a_number() -> None:
    with FakeMessagesAPI([ToolUse(TOOL)]) as api:
        side = json.loads(post(api, "/v1/messages", {"messages": [user("title?")]})[1])
        assert side["content"] == [{"type": "text", "text": "OK"}]
        counted = json.loads(post(api, "/v1/messages/count_tokens", {"messages": [user("x")]})[1])
        assert isinstance(counted["input_tokens"], int) and counted["input_tokens"] > 0
        assert [r.endpoint for r in api.requests] == ["/v1/messages", "/v1/messages/count_tokens"]
        assert api.tool_results() == []


def background_result(step: int, task: str) -> dict[str, Any]:
    text = f"The call was moved to the background as task ID {task}. You will be told when it finishes."
    return {"type": "tool_result", "tool_use_id": tool_use_id(step), "content": [{"type": "text", "text": text}]}


def test_a_stop_step_moved_to_the_background_is_answered_with_task_stop_for_that_task_then_the_script_goes_on() -> None:
    script = [ToolUse(TOOL, {"text": "long"}, stop=True), ToolUse(TOOL, {"text": "next"})]
    with FakeMessagesAPI(script) as api:
        call = {"role": "assistant", "content": [{"type": "tool_use", "id": tool_use_id(0), "name": TOOL}]}
        turn = [user("go"), call, user([background_result(0, "b7x2k9")])]
        stop = json.loads(post(api, "/v1/messages", {"tools": TOOLS, "messages": turn})[1])
        assert stop["content"] == [
            {"type": "tool_use", "id": stop_use_id(0), "name": "TaskStop", "input": {"task_id": "b7x2k9"}}
        ]
        stopped = {"type": "tool_result", "tool_use_id": stop_use_id(0), "content": "stopped"}
        turn += [{"role": "assistant", "content": stop["content"]}, user([stopped])]
        after = json.loads(post(api, "/v1/messages", {"tools": TOOLS, "messages": turn})[1])
        assert after["content"][0]["id"] == tool_use_id(1)
        assert after["content"][0]["input"] == {"text": "next"}


def test_a_step_not_marked_stop_is_left_running_in_the_background() -> None:
    with FakeMessagesAPI([ToolUse(TOOL, {"text": "long"})]) as api:
        call = {"role": "assistant", "content": [{"type": "tool_use", "id": tool_use_id(0), "name": TOOL}]}
        turn = [user("go"), call, user([background_result(0, "b7x2k9")])]
        final = json.loads(post(api, "/v1/messages", {"tools": TOOLS, "messages": turn})[1])
        assert final["stop_reason"] == "end_turn"
        assert background_task_id(background_result(0, "b7x2k9")) == "b7x2k9"


def test_the_background_task_id_is_read_from_the_print_mode_wording_too() -> None:
    # Claude Code 2.1.332 in -p stream-json, for an MCP task (seen against wiretap lab serve).
    text = (
        'MCP tool "lab/endless_task" started server-side task lab-1-until-cancelled. It was moved to the '
        "background as task kmcjlohwv and keeps running on the server; "
        'To stop it, use TaskStop with task_id "kmcjlohwv"'
    )
    assert background_task_id({"content": [{"type": "text", "text": text}]}) == "kmcjlohwv"
