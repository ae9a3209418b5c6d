"""One-line, human summaries of JSON-RPC messages (MCP and A2A), for timelines.

Every function here is total: whatever shape a message has, it returns a string and never raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wiretap.wire.json_values import as_dict

Summary = Callable[[dict[str, Any]], str]
_MODERN_VERSION = "io.modelcontextprotocol/protocolVersion"
_MODERN_CLIENT = "io.modelcontextprotocol/clientInfo"
_MODERN_SERVER = "io.modelcontextprotocol/serverInfo"


def clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _who(info: Any) -> str:
    info = as_dict(info)
    return " ".join(str(info[k]) for k in ("name", "version") if k in info)


def _task_brief(task: dict[str, Any]) -> str:
    parts = [f"task {task.get('taskId', task.get('id', '?'))}"]
    status = task.get("status")
    if isinstance(status, dict):  # A2A: {"state": ...}
        status = status.get("state")
    if status:
        parts.append(str(status))
    for key, unit in (("pollInterval", "ms"), ("pollIntervalMs", "ms")):
        if key in task:
            parts.append(f"poll {task[key]}{unit}")
    return " ".join(parts)


def _initialize(params: dict[str, Any]) -> str:
    return " ".join(p for p in (str(params.get("protocolVersion", "")), _who(params.get("clientInfo"))) if p)


def _modern_meta(params: dict[str, Any]) -> str:
    meta = as_dict(params.get("_meta"))
    return " ".join(p for p in (str(meta.get(_MODERN_VERSION, "")), _who(meta.get(_MODERN_CLIENT))) if p)


def _tools_call(params: dict[str, Any]) -> str:
    text = str(params.get("name", "?"))
    arguments = params.get("arguments")
    if arguments:
        text += " " + clip(json.dumps(arguments, ensure_ascii=False), 40)
    if "task" in params:
        text += " [as task]"
    if tool_use := as_dict(params.get("_meta")).get("claudecode/toolUseId"):
        text += f" [tool_use {tool_use}]"
    if "inputResponses" in params:
        text += f" [answers: {', '.join(map(str, as_dict(params['inputResponses'])))}]"
    return text


def _progress(params: dict[str, Any]) -> str:
    done = params.get("progress", "?")
    total = params.get("total")
    text = f"{done}/{total}" if total is not None else str(done)
    return f"{text} {clip(str(params.get('message', '')), 40)}".strip()


def _task_id(params: dict[str, Any]) -> str:
    text = str(params.get("taskId", params.get("id", "?")))
    if "inputResponses" in params:
        text += f" answers: {', '.join(map(str, as_dict(params['inputResponses'])))}"
    return text


def _a2a_message(params: dict[str, Any]) -> str:
    message = as_dict(params.get("message"))
    texts = [str(p.get("text")) for p in message.get("parts", []) if isinstance(p, dict) and "text" in p]
    task = message.get("taskId")
    return clip((f"task {task} " if task else "") + " ".join(texts), 50)


REQUEST_SUMMARIES: dict[str, Summary] = {
    "initialize": _initialize,
    "server/discover": _modern_meta,
    "tools/call": _tools_call,
    "resources/read": lambda p: str(p.get("uri", "")),
    "prompts/get": lambda p: str(p.get("name", "")),
    "notifications/progress": _progress,
    "notifications/cancelled": lambda p: clip(f"request {p.get('requestId')} {p.get('reason', '')}".strip()),
    "notifications/message": lambda p: clip(f"{p.get('level', '')} {p.get('data', '')}"),
    "notifications/tasks/status": _task_brief,
    "notifications/tasks": _task_brief,
    "elicitation/create": lambda p: clip(str(p.get("message", ""))),
    "tasks/get": _task_id,
    "tasks/result": _task_id,
    "tasks/cancel": _task_id,
    "tasks/update": _task_id,
    "SendMessage": _a2a_message,
    "SendStreamingMessage": _a2a_message,
    "message/send": _a2a_message,
    "message/stream": _a2a_message,
    "GetTask": _task_id,
    "CancelTask": _task_id,
    "SubscribeToTask": _task_id,
    "tasks/resubscribe": _task_id,
}


def summarize_request(method: str, params: Any) -> str:
    summary = REQUEST_SUMMARIES.get(method)
    if summary is None:
        return ""
    try:
        return summary(as_dict(params))
    except Exception:  # a summary is a courtesy; a strange message must still be shown
        return ""


def _first_text(result: dict[str, Any]) -> str:
    for item in result.get("content") or []:
        if isinstance(item, dict) and item.get("type") == "text":
            return clip(str(item.get("text", "")), 50)
    return ""


def _stream_event(result: dict[str, Any]) -> str | None:
    """An A2A streaming event (1.0 ``statusUpdate``/``artifactUpdate``/``message``, 0.3 ``kind``)."""
    status = result.get("statusUpdate") if isinstance(result.get("statusUpdate"), dict) else None
    if status is None and result.get("kind") == "status-update":
        status = result
    if status is not None:
        final = " (final)" if status.get("final") is True else ""
        return f"status update: {_task_brief(status)}{final}"
    artifact = result.get("artifactUpdate") if isinstance(result.get("artifactUpdate"), dict) else None
    if artifact is None and result.get("kind") == "artifact-update":
        artifact = result
    if artifact is not None:
        named = as_dict(artifact.get("artifact"))
        name = named.get("name") or named.get("artifactId") or "?"
        return f"artifact update: task {artifact.get('taskId', '?')} {name}"
    message = result.get("message") if isinstance(result.get("message"), dict) else None
    if message is None and result.get("kind") == "message":
        message = result
    if message is not None:
        return "message: " + _a2a_message({"message": message})
    return None


def _result_text(method: str | None, result: dict[str, Any]) -> str:
    streamed = _stream_event(result)
    if streamed is not None:
        return streamed
    result_type = result.get("resultType")
    if result_type == "task" or ("taskId" in result and "status" in result):
        return _task_brief(result)
    if isinstance(result.get("task"), dict):
        return _task_brief(result["task"])
    if result.get("kind") == "task" or (isinstance(result.get("status"), dict) and "id" in result):
        return _task_brief(result)
    if result_type == "input_required":
        return "input required: " + ", ".join(map(str, as_dict(result.get("inputRequests"))))
    if method == "initialize":
        return " ".join(p for p in (str(result.get("protocolVersion", "")), _who(result.get("serverInfo"))) if p)
    if method == "server/discover":
        versions = ",".join(map(str, result.get("supportedVersions") or []))
        return f"{versions} {_who(as_dict(result.get('_meta')).get(_MODERN_SERVER))}".strip()
    for key in ("tools", "prompts", "resources", "resourceTemplates", "tasks"):
        if isinstance(result.get(key), list):
            return f"{len(result[key])} {key}"
    if method == "elicitation/create" or "action" in result:
        return str(result.get("action", ""))
    text = _first_text(result)
    return ("error: " + text) if result.get("isError") else text


def summarize_result(method: str | None, result: Any) -> str:
    try:
        return _result_text(method, as_dict(result))
    except Exception:
        return ""


def summarize_error(error: Any) -> str:
    error = as_dict(error)
    return clip(f"error {error.get('code', '?')} {error.get('message', '')}".strip(), 70)
