"""A2A objects as each version spells them: 1.0 (enum names, no ``kind``) and 0.3 (``kind``, lower-case
states), and the errors of both bindings."""

from __future__ import annotations

from typing import Any

from wiretap.lab.a2a.conditions import SKILLS

V10, V03 = "1.0", "0.3"
ERROR_REASONS = {
    -32001: ("TASK_NOT_FOUND", 404, "NOT_FOUND"),
    -32002: ("TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION"),
    -32004: ("UNSUPPORTED_OPERATION", 400, "UNIMPLEMENTED"),
    -32600: ("INVALID_REQUEST", 400, "INVALID_ARGUMENT"),
    -32601: ("METHOD_NOT_FOUND", 404, "NOT_FOUND"),
    -32602: ("INVALID_PARAMS", 400, "INVALID_ARGUMENT"),
    -32700: ("PARSE_ERROR", 400, "INVALID_ARGUMENT"),
}


def state_name(state: str, version: str) -> str:
    """``WORKING`` as the version spells it: ``TASK_STATE_WORKING`` or ``working``."""
    return f"TASK_STATE_{state}" if version == V10 else state.lower().replace("_", "-")


def text_part(text: str, version: str) -> dict[str, Any]:
    return {"text": text} if version == V10 else {"kind": "text", "text": text}


def data_part(data: dict[str, Any], version: str, filename: str) -> dict[str, Any]:
    if version == V10:
        return {"data": data, "mediaType": "application/json", "filename": filename}
    return {"kind": "data", "data": data, "metadata": {"filename": filename}}


def agent_message(message_id: str, text: str, task_id: str, context_id: str, version: str) -> dict[str, Any]:
    message = {
        "messageId": message_id,
        "role": "ROLE_AGENT" if version == V10 else "agent",
        "parts": [text_part(text, version)],
        "taskId": task_id,
        "contextId": context_id,
    }
    return message if version == V10 else {"kind": "message", **message}


def card(base: str) -> dict[str, Any]:
    """The agent card: 1.0 interfaces, with the 0.3 fields a 0.3 client reads."""
    jsonrpc, rest = f"{base}/a2a/jsonrpc", f"{base}/a2a/rest"
    return {
        "name": "wiretap-lab",
        "description": "wiretap's lab agent: each skill is a condition of a client-behaviour investigation. "
        "Name the skill as the first word of the message text, then its arguments.",
        "version": "1",
        "supportedInterfaces": [
            {"url": jsonrpc, "protocolBinding": "JSONRPC", "protocolVersion": V10},
            {"url": rest, "protocolBinding": "HTTP+JSON", "protocolVersion": V10},
        ],
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {"id": s.id, "name": s.name, "description": s.description, "tags": ["lab"], "examples": [s.example]}
            for s in SKILLS
        ],
        "url": jsonrpc,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [{"url": rest, "transport": "HTTP+JSON"}],
    }


def rpc_error(request_id: Any, code: int, message: str, version: str) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if version == V10 and code in ERROR_REASONS:
        error["data"] = [_error_info(code)]
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def rest_error(code: int, message: str) -> tuple[int, dict[str, Any]]:
    _, status, name = ERROR_REASONS.get(code, ("INTERNAL", 500, "INTERNAL"))
    return status, {"error": {"code": status, "status": name, "message": message, "details": [_error_info(code)]}}


def _error_info(code: int) -> dict[str, Any]:
    reason = ERROR_REASONS.get(code, ("INTERNAL",))[0]
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
        "metadata": {},
    }
