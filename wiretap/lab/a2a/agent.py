"""The lab's A2A agent without sockets: a request and the time go in, answers (each with the time to send
it) and an exit come out. A task's state is a function of its condition and the clock, so the agent needs
no timers of its own; the transport holds an answer until its time and ends the process at an exit's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wiretap.lab.a2a import shapes
from wiretap.lab.a2a.conditions import Condition, condition_of
from wiretap.lab.a2a.shapes import V03, V10
from wiretap.wire.json_values import as_dict

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
JSONRPC_PATH, REST_PATH = "/a2a/jsonrpc", "/a2a/rest"
CRASH_STATUS = 1
TERMINAL = {"COMPLETED", "FAILED", "CANCELED", "REJECTED"}
INTERRUPTED = {"INPUT_REQUIRED", "AUTH_REQUIRED"}
QUESTIONS = {
    "INPUT_REQUIRED": "Which city should the forecast be for? Answer with a message on this task.",
    "AUTH_REQUIRED": "Sign in to the lab's calendar first, then send any message on this task.",
}
_SEND = {"SendMessage", "message/send"}
_GET = {"GetTask", "tasks/get"}
_CANCEL = {"CancelTask", "tasks/cancel"}
_UNSUPPORTED = {
    "SendStreamingMessage", "message/stream", "SubscribeToTask", "tasks/resubscribe", "ListTasks",
    "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard",
    "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
}  # fmt: skip


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes = b""


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes
    at: float
    """When to send it (the clock the agent was given): now, or later for a held answer."""


@dataclass(frozen=True)
class Exit:
    at: float
    status: int


@dataclass(frozen=True)
class Handled:
    rpc: str | None
    """The JSON-RPC method or REST operation, for the agent's log."""
    task: str | None
    answer: Answer | None
    exit: Exit | None = None


@dataclass
class LabTask:
    id: str
    context_id: str
    condition: Condition
    created: float
    history: list[dict[str, Any]] = field(default_factory=list)
    forced: str | None = None
    """A state set by the client's own act (a follow-up message, a cancel)."""

    def state(self, now: float) -> str:
        if self.forced is not None:
            return self.forced
        c = self.condition
        fixed = {"reject": "REJECTED", "failing-artifact": "COMPLETED", "done": "COMPLETED"}
        fixed |= {"input-required": "INPUT_REQUIRED", "auth-required": "AUTH_REQUIRED", "crash": "WORKING"}
        if c.name in fixed:
            return fixed[c.name]
        return "COMPLETED" if now >= self.ready_at else "WORKING"

    @property
    def ready_at(self) -> float:
        c = self.condition
        return self.created + c.seconds + (c.after if c.name == "silent" else 0.0)

    def silent_until(self, now: float) -> float | None:
        """For a silent task in its silence, when a GetTask asked now may be answered."""
        c = self.condition
        if c.name == "silent" and self.forced is None and self.created + c.after <= now < self.ready_at:
            return self.ready_at
        return None


class A2AAgent:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.tasks: dict[str, LabTask] = {}
        self._made = 0

    def handle(self, request: Request, now: float) -> Handled:
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path in CARD_PATHS:
            return Handled(None, None, _json(200, shapes.card(self.base_url), now, "application/json"))
        if request.method == "POST" and path == JSONRPC_PATH:
            return self._jsonrpc(request.body, now)
        if path == REST_PATH or path.startswith(REST_PATH + "/"):
            return self._rest(request.method, path[len(REST_PATH) :], request.body, now)
        return Handled(None, None, _json(404, {"error": f"nothing at {path}"}, now, "application/json"))

    # -- JSON-RPC ----------------------------------------------------------------------------------

    def _jsonrpc(self, body: bytes, now: float) -> Handled:
        try:
            message = json.loads(body)
        except ValueError:
            return Handled(None, None, _json(200, shapes.rpc_error(None, -32700, "Parse error", V10), now))
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            detail = "Batch requests are not supported" if isinstance(message, list) else "Invalid request"
            return Handled(None, None, _json(200, shapes.rpc_error(None, -32600, detail, V10), now))
        method, rid = message["method"], message.get("id")
        params = as_dict(message.get("params"))
        version = V03 if "/" in method else V10
        result, error, task, held, leave = self._operation(method, params, version, now)
        body_out = shapes.rpc_error(rid, *error, version) if error else {"jsonrpc": "2.0", "id": rid, "result": result}
        return Handled(method, task, _json(200, body_out, held if held is not None else now), leave)

    # -- HTTP+JSON (REST) --------------------------------------------------------------------------

    def _rest(self, verb: str, path: str, body: bytes, now: float) -> Handled:
        if path.startswith("/v1/"):
            path = path[3:]
        try:
            params = as_dict(json.loads(body)) if body else {}
        except ValueError:
            status, error = shapes.rest_error(-32700, "Parse error")
            return Handled(None, None, _json(status, error, now))
        method: str | None = None
        if verb == "POST" and path == "/message:send":
            method = "SendMessage"
        elif verb == "POST" and path == "/message:stream":
            method = "SendStreamingMessage"
        elif path.startswith("/tasks/") and path.endswith(":cancel") and verb == "POST":
            method, params = "CancelTask", {"id": path[len("/tasks/") : -len(":cancel")]}
        elif path.startswith("/tasks/") and verb == "GET" and "/" not in path[len("/tasks/") :]:
            method, params = "GetTask", {"id": path[len("/tasks/") :]}
        if method is None:
            status, error_body = shapes.rest_error(-32601, f"no operation {verb} {path}")
            return Handled(None, None, _json(status, error_body, now))
        result, failed, task, held, leave = self._operation(method, params, V10, now)
        if failed:
            status, error_body = shapes.rest_error(*failed)
            return Handled(method, task, _json(status, error_body, now), leave)
        at = held if held is not None else now
        return Handled(method, task, _json(200, result, at, "application/a2a+json"), leave)

    # -- operations --------------------------------------------------------------------------------

    def _operation(
        self, method: str, params: dict[str, Any], version: str, now: float
    ) -> tuple[Any, tuple[int, str] | None, str | None, float | None, Exit | None]:
        """(result, error, task id, when to answer if later, exit) of one operation in either binding."""
        if method in _SEND:
            return self._send(params, version, now)
        if method in _GET or method in _CANCEL:
            task = self.tasks.get(str(params.get("id")))
            if task is None:
                return None, (-32001, "Task not found"), str(params.get("id")), None, None
            if method in _CANCEL:
                return self._cancel(task, version, now)
            held = task.silent_until(now)
            return self._task(task, version, held if held is not None else now), None, task.id, held, None
        if method in _UNSUPPORTED:
            return None, (-32004, f"{method} is not supported by the lab agent"), None, None, None
        return None, (-32601, f"Method not found: {method}"), None, None, None

    def _send(
        self, params: dict[str, Any], version: str, now: float
    ) -> tuple[Any, tuple[int, str] | None, str | None, float | None, Exit | None]:
        message = params.get("message") if isinstance(params.get("message"), dict) else None
        if message is None:
            return None, (-32602, "params.message is required"), None, None, None
        if message.get("taskId"):
            return self._follow_up(message, version, now)
        self._made += 1
        task = LabTask(f"lab-task-{self._made}", str(message.get("contextId") or f"lab-context-{self._made}"),
                       condition_of(message), now, [message])  # fmt: skip
        self.tasks[task.id] = task
        configuration = as_dict(params.get("configuration"))
        blocking = (
            configuration.get("blocking") is not False if version == V03 else not configuration.get("returnImmediately")
        )
        later = task.ready_at if blocking and task.condition.name == "slow" else None
        leave = Exit(task.created + task.condition.seconds, CRASH_STATUS) if task.condition.name == "crash" else None
        result = self._task(task, version, later if later is not None else now)
        return (result if version == V03 else {"task": result}), None, task.id, later, leave

    def _follow_up(
        self, message: dict[str, Any], version: str, now: float
    ) -> tuple[Any, tuple[int, str] | None, str | None, float | None, Exit | None]:
        task = self.tasks.get(str(message["taskId"]))
        if task is None:
            return None, (-32001, "Task not found"), str(message["taskId"]), None, None
        state = task.state(now)
        if state in TERMINAL:
            return None, (-32004, f"Task {task.id} is in terminal state: {state}"), task.id, None, None
        task.history.append(message)
        if state in INTERRUPTED:
            task.forced = "COMPLETED"
        result = self._task(task, version, now)
        return (result if version == V03 else {"task": result}), None, task.id, None, None

    def _cancel(
        self, task: LabTask, version: str, now: float
    ) -> tuple[Any, tuple[int, str] | None, str | None, float | None, Exit | None]:
        state = task.state(now)
        if state in TERMINAL:
            return None, (-32002, f"Task {task.id} cannot be canceled: it is {state}"), task.id, None, None
        task.forced = "CANCELED"
        return self._task(task, version, now), None, task.id, None, None

    def _task(self, task: LabTask, version: str, now: float) -> dict[str, Any]:
        state = task.state(now)
        status: dict[str, Any] = {"state": shapes.state_name(state, version)}
        text = QUESTIONS.get(state) or (task.condition.reason if state == "REJECTED" else None)
        if text and task.forced is None:
            status["message"] = shapes.agent_message(f"{task.id}-status", text, task.id, task.context_id, version)
        out: dict[str, Any] = {"id": task.id, "contextId": task.context_id, "status": status}
        if state == "COMPLETED":
            out["artifacts"] = [self._artifact(task, version)]
        out["history"] = task.history
        out["metadata"] = {"condition": task.condition.name}
        return out if version == V10 else {"kind": "task", **out}

    @staticmethod
    def _artifact(task: LabTask, version: str) -> dict[str, Any]:
        if task.condition.name == "failing-artifact":
            summary = {"tests": 4, "passed": 3, "failed": 1}
            part = shapes.data_part(summary, version, "summary.json")
            return {"artifactId": f"{task.id}-summary", "name": "summary.json", "parts": [part]}
        part = shapes.text_part(f"the lab's {task.condition.name} task is done", version)
        return {"artifactId": f"{task.id}-result", "name": "result", "parts": [part]}


def _json(status: int, body: Any, at: float, content_type: str = "application/json") -> Answer:
    return Answer(status, content_type, json.dumps(body, separators=(",", ":")).encode(), at)
