"""Span names and attributes for one JSON-RPC or A2A REST call, following the OpenTelemetry MCP and
RPC semantic conventions; ``wiretap.*`` and ``a2a.*`` where they have none (docs/otel.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from wiretap.otel.spans import Attributes, parse_traceparent
from wiretap.wire.json_values import as_dict

A2A_METHODS = frozenset(
    {
        "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
        "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard",
        "message/send", "message/stream", "tasks/resubscribe", "agent/getAuthenticatedExtendedCard",
        "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
    }
)  # fmt: skip
"""A2A 1.0 and 0.3 JSON-RPC methods; 0.3's ``tasks/get`` and ``tasks/cancel`` are told apart from
MCP's by the recording having spoken A2A before (an ``A2A-Version`` header or an agent card)."""
RESOURCE_METHODS = frozenset(
    {"resources/read", "resources/subscribe", "resources/unsubscribe", "notifications/resources/updated"}
)
TASK_TARGETED = frozenset({"tasks/get", "tasks/result", "tasks/cancel", "tasks/update", "notifications/tasks/status"})
A2A_TASK_TARGETED = frozenset(
    {"GetTask", "CancelTask", "SubscribeToTask", "tasks/get", "tasks/cancel", "tasks/resubscribe"}
)
PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"
TOOL_USE_META = "claudecode/toolUseId"
"""Claude Code's id of the model's ``tool_use`` block behind a call: the GenAI ``gen_ai.tool.call.id``,
which Claude Code's own tool span carries too."""


def params_of(msg: dict[str, Any]) -> dict[str, Any]:
    params = msg.get("params")
    return as_dict(params)


def meta_of(params: dict[str, Any]) -> dict[str, Any]:
    meta = params.get("_meta")
    return as_dict(meta)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def request_id(value: object) -> str | None:
    """``jsonrpc.request.id``: not captured for a null id."""
    if value is None or isinstance(value, bool):
        return None
    return str(value)


def targeted_task(method: str, params: dict[str, Any], a2a: bool) -> str | None:
    """The task a call is about (a poll, a cancel, a result fetch, a status notification)."""
    if a2a and method in A2A_TASK_TARGETED:
        return _text(params.get("id")) or _text(params.get("taskId"))
    if method in TASK_TARGETED:
        return _text(params.get("taskId"))
    return None


def mcp_call(method: str, msg: dict[str, Any]) -> tuple[str, Attributes]:
    params = params_of(msg)
    attributes: Attributes = {"mcp.method.name": method}
    target = None
    if method == "tools/call" and (tool := _text(params.get("name"))):
        attributes["gen_ai.tool.name"] = target = tool
        attributes["gen_ai.operation.name"] = "execute_tool"
    elif method.startswith("prompts/get") and (prompt := _text(params.get("name"))):
        attributes["gen_ai.prompt.name"] = target = prompt
    if method in RESOURCE_METHODS and (uri := _text(params.get("uri"))):
        attributes["mcp.resource.uri"] = uri
    if version := _text(meta_of(params).get(PROTOCOL_META)):
        attributes["mcp.protocol.version"] = version
    if tool_use := tool_use_id(params):
        attributes["gen_ai.tool.call.id"] = tool_use
    return (f"{method} {target}" if target else method), attributes


def tool_use_id(params: dict[str, Any]) -> str | None:
    return _text(meta_of(params).get(TOOL_USE_META))


def a2a_call(method: str, msg: dict[str, Any]) -> tuple[str, Attributes]:
    attributes: Attributes = {"rpc.system.name": "jsonrpc", "rpc.method": method}
    return method, attributes


def a2a_rest_call(rest: Mapping[str, Any]) -> tuple[str, Attributes]:
    operation = _text(rest.get("operation")) or "request"
    attributes: Attributes = {"rpc.system.name": "a2a_rest", "rpc.method": operation}
    if method := _text(rest.get("method")):
        attributes["http.request.method"] = method
    if path := _text(rest.get("path")):
        attributes["url.path"] = path
    return operation, attributes


def transport_attributes(header: dict[str, Any], http_version: str | None) -> Attributes:
    """``network.*`` and ``server.*``: stdio is a pipe; HTTP is TCP to the upstream wiretap proxied to."""
    if header.get("transport") != "http":
        return {"network.transport": "pipe"}
    attributes: Attributes = {"network.transport": "tcp", "network.protocol.name": "http"}
    if http_version:
        attributes["network.protocol.version"] = http_version
    upstream = urlsplit(str(header.get("upstream") or ""))
    if upstream.hostname:
        attributes["server.address"] = upstream.hostname
        try:
            port = upstream.port
        except ValueError:
            port = None
        attributes["server.port"] = port or (443 if upstream.scheme == "https" else 80)
    return attributes


def traceparent_of(params: dict[str, Any]) -> tuple[bytes, bytes] | None:
    return parse_traceparent(meta_of(params).get("traceparent"))


def created_task(result: dict[str, Any]) -> str | None:
    """The id of a task a result hands out: MCP ``{task: {taskId}}``, A2A ``{task: {id}}`` or a bare A2A task."""
    task = result.get("task")
    if isinstance(task, dict):
        return _text(task.get("taskId")) or _text(task.get("id"))
    if isinstance(result.get("status"), dict) and "contextId" in result:
        return _text(result.get("id"))
    return None
