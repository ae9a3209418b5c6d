"""Long-running tasks reconstructed from the messages alone: MCP 2025-11-25 core tasks, the MCP
2026-07-28 tasks extension, and A2A tasks (1.0 and 0.3, JSON-RPC and REST)."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from wiretap.analysis.conversation import NOTIFICATION, REQUEST, RESPONSE, Message
from wiretap.analysis.findings import Findings
from wiretap.analysis.outcomes import failing_artifact, status_text
from wiretap.analysis.states import (
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    REJECTED,
    TERMINAL,
    UNKNOWN,
    State,
    a2a_state,
    mcp_state,
)
from wiretap.analysis.task import Task
from wiretap.recording.event_types import typed
from wiretap.recording.events import Event
from wiretap.wire.json_values import as_dict

MCP_2025 = "mcp-2025-11-25"
MCP_EXTENSION = "mcp-tasks-extension"
A2A_10, A2A_03 = "a2a-1.0", "a2a-0.3"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SLOW_POLL_SECONDS = 15.0
FAILED_RUN = 3
RECENT_CALLS = 1000
"""How many distinct tool calls are remembered to spot a repeat: memory stays flat on long recordings."""

_A2A_SEND = {"SendMessage", "SendStreamingMessage", "message/send", "message/stream"}
_A2A_GET = {"GetTask"}
_A2A_CANCEL = {"CancelTask"}
_A2A_SUBSCRIBE = {"SubscribeToTask", "tasks/resubscribe"}
_NOT_FOUND = {-32602, -32001, 404}
_MCP_VERBS = {"tasks/get": "get", "tasks/cancel": "cancel", "tasks/update": "update", "tasks/result": "result"}
_TO_A_TASK = {"tasks/cancel", "CancelTask", "SubscribeToTask", "tasks/resubscribe"} | _A2A_SEND


def client_declares_extension(params: dict[str, Any]) -> bool:
    capabilities = as_dict(as_dict(params.get("_meta")).get(CAPABILITIES))
    return TASKS_EXTENSION in as_dict(capabilities.get("extensions"))


class TaskTracker:
    def __init__(self, findings: Findings) -> None:
        self.tasks: dict[str, Task] = {}
        self.findings = findings
        self._last_calls: OrderedDict[str, Message] = OrderedDict()
        self._failing: set[str] = set()
        self._open_polls: dict[int, tuple[Task, float]] = {}
        self._conn_ex: dict[int, int] = {}
        self._ex_conn: dict[int, int] = {}
        """The exchange each HTTP connection is carrying now."""
        """HTTP exchanges carrying a poll not yet answered: the task and when it was asked."""

    def task(self, key: str) -> Task | None:
        return self.tasks.get(key)

    # -- feeding ---------------------------------------------------------------------------------

    def feed_event(self, recorded: Event) -> None:
        """A poll's HTTP exchange the client left unanswered (it closed its connection): it abandoned the poll
        (``abandon`` keeps the first sign: the half-close, else the exchange's end)."""
        event, t = typed(recorded), float(recorded.get("t", 0.0))
        if event["kind"] == "http_request" and isinstance(ex := event.get("ex"), int):
            if isinstance(conn := event.get("conn"), int):
                self._conn_ex[conn] = ex
                self._ex_conn[ex] = conn
        elif event["kind"] == "connection" and event.get("state") == "half_closed":
            conn = event.get("conn")
            poll = self._open_polls.get(self._conn_ex.get(conn, -1)) if isinstance(conn, int) else None
            if poll is not None:
                poll[0].polls.abandon(poll[1], t)
        elif event["kind"] == "http_end" and isinstance(ex := event.get("ex"), int):
            conn = self._ex_conn.pop(ex, None)
            if conn is not None and self._conn_ex.get(conn) == ex:
                del self._conn_ex[conn]
            poll = self._open_polls.pop(ex, None)
            if poll is not None and event.get("outcome") == "client_disconnected":
                poll[0].polls.abandon(poll[1], t)

    def feed(self, message: Message) -> None:
        if message.kind == REQUEST:
            self._request(message)
        elif message.kind == RESPONSE:
            self._response(message)
        elif message.kind == NOTIFICATION:
            self._notification(message)

    def _request(self, m: Message) -> None:
        method, params = m.method or "", m.params
        if method == "tools/call":
            self._repeated_call(m)
        elif method == "elicitation/create":
            self._elicitation(m)
        elif (verb := _MCP_VERBS.get(method)) is not None:
            a2a = "taskId" not in params and "id" in params
            key = self._key("a2a" if a2a else "mcp", params.get("id") if a2a else params.get("taskId"))
            self._task_request(m, verb, key, a2a_03=a2a)
        elif method in _A2A_GET or method in _A2A_CANCEL or method in _A2A_SUBSCRIBE:
            verb = "get" if method in _A2A_GET else "cancel" if method in _A2A_CANCEL else "subscribe"
            self._task_request(m, verb, self._key("a2a", params.get("id")), a2a_03=False)
        elif method in _A2A_SEND:
            task_id = as_dict(params.get("message")).get("taskId")
            if task_id:
                self._task_request(m, "message", self._key("a2a", task_id), a2a_03=False)
        elif method == "notifications/cancelled":
            for task in self.tasks.values():
                if task.create_request_id is not None and task.create_request_id == params.get("requestId"):
                    task.cancels.append((m.t, "notifications/cancelled"))

    def _task_request(self, m: Message, verb: str, key: str | None, *, a2a_03: bool) -> None:
        if key is None:
            return
        task = self.tasks.get(key)
        if task is None and verb == "get":
            task = self._new_task(key, m, seen_by_poll=True, a2a_03=a2a_03)
        if task is None:
            return
        if verb == "get":
            self._poll(task, m)
        elif verb == "cancel":
            task.cancels.append((m.t, m.method or "cancel"))
        elif verb == "update" and "inputResponses" in m.params:
            task.answers.append((m.t, "tasks/update"))
        elif verb == "message":
            task.answers.append((m.t, m.method or "message"))

    def _new_task(self, key: str, m: Message, *, seen_by_poll: bool, a2a_03: bool = False) -> Task:
        protocol, task_id = key.split(":", 1)
        design = (A2A_03 if a2a_03 else A2A_10) if protocol == "a2a" else MCP_2025
        task = self.tasks[key] = Task(task_id, protocol, design, m.t, seen_first_by_poll=seen_by_poll)
        return task

    def _poll(self, task: Task, m: Message) -> None:
        polls = task.polls
        previous_error = polls.last_error() if polls.errors else None
        polls.add(m.t)
        if isinstance(m.ex, int):
            self._open_polls[m.ex] = (task, m.t)
        if task.told_terminal_at is not None and m.t > task.told_terminal_at:
            self.findings.poll_after_terminal(task, m.t)
        if task.not_found_at is not None and previous_error in _NOT_FOUND:
            self.findings.polled_unknown_task(task, m.t)

    def _repeated_call(self, m: Message) -> None:
        signature = json.dumps([m.params.get("name"), m.params.get("arguments")], sort_keys=True, default=str)
        earlier = self._last_calls.pop(signature, None)
        if earlier is not None and _outcome_unknown(earlier, before=m.t):
            self.findings.duplicate_after_unknown_outcome(earlier, m)
        self._last_calls[signature] = m
        if len(self._last_calls) > RECENT_CALLS:
            self._last_calls.popitem(last=False)

    def _response(self, m: Message) -> None:
        request = m.request
        if request is None:
            return
        method = request.method or ""
        result = as_dict(m.result)
        if method == "tools/call":
            self._tools_call_result(request, m, result)
        elif method == "elicitation/create":
            task = self.tasks.get(f"mcp:{related_task(request.params)}")
            if task is not None:
                task.answers.append((m.t, f"elicitation {result.get('action', 'answer')}"))
        elif method in ("tasks/get", "GetTask"):
            self._poll_answer(request, m, result)
        elif method == "tasks/result":
            self._result_answer(request, m, result)
        elif method in ("tasks/cancel", "CancelTask"):
            self._cancel_answer(request, m, result)
        elif method in _A2A_SEND or method in _A2A_SUBSCRIBE:
            self._a2a_result(request, m, result)
        if method in _TO_A_TASK:
            self._answer_to_terminal_task(request, m)

    def _answer_to_terminal_task(self, request: Message, m: Message) -> None:
        task_id = as_dict(request.params.get("message")).get("taskId")
        key = self._key("a2a", task_id) if task_id else self._request_task_key(request)
        task = self.tasks.get(key) if key else None
        if task is not None and m.error is not None:
            self._refused(task, request, m.error_code)
        known_terminal = task is not None and task.told_terminal_at is not None and request.t > task.told_terminal_at
        if known_terminal or m.error_code in (-32004, -32002):
            self.findings.request_to_terminal(task, request, m)

    def _tools_call_result(self, request: Message, m: Message, result: dict[str, Any]) -> None:
        if isinstance(result.get("task"), dict):
            task_dict, design = result["task"], MCP_2025
            supported = "task" in request.params
        elif result.get("resultType") == "task":
            task_dict, design = result, MCP_EXTENSION
            supported = client_declares_extension(request.params)
        else:
            return
        task_id = task_dict.get("taskId")
        if not task_id:
            return
        key = f"mcp:{task_id}"
        task = self.tasks.get(key) or Task(str(task_id), "mcp", design, m.t)
        self.tasks[key] = task
        task.tool = str(request.params.get("name")) if request.params.get("name") else None
        task.create_request_id = request.id
        self._mcp_fields(task, task_dict, m.t)
        if not supported:
            self.findings.task_without_support(task, request, m)

    def _mcp_fields(self, task: Task, task_dict: dict[str, Any], t: float, *, told: bool = True) -> None:
        interval = task_dict.get("pollIntervalMs", task_dict.get("pollInterval"))
        if isinstance(interval, int | float) and not isinstance(interval, bool):
            task.requested_poll_ms = int(interval)
        if "status" in task_dict:
            self._state(task, mcp_state(task_dict["status"]), t, None, told=told)
        requests = task_dict.get("inputRequests")
        if isinstance(requests, dict) and task.states:
            task.input_keys.setdefault(task.states[-1][0], [str(key) for key in requests])
        if task.design == MCP_2025 and "pollIntervalMs" in task_dict:
            task.design = MCP_EXTENSION

    def _poll_answer(self, request: Message, m: Message, result: dict[str, Any]) -> None:
        key = self._request_task_key(request)
        task = self.tasks.get(key) if key else None
        if task is None:
            return
        task.polls.answer(request.t, m.t, m.error_code, failed=m.error is not None)
        if isinstance(request.ex, int):
            self._open_polls.pop(request.ex, None)
        if m.error is not None and task.seen_first_by_poll and not task.states and m.error_code in _NOT_FOUND:
            # A poll for an id the server never knew (as far as the recording shows): a finding, not a task.
            self.tasks.pop(str(key), None)
            self.findings.polled_unseen_task(task.id, request, m)
            return
        if m.error is not None:
            if m.error_code in _NOT_FOUND:
                task.not_found_at = task.not_found_at or m.t
            self._failed_run(task)
            return
        if task.protocol == "mcp":
            self._mcp_fields(task, result, m.t)
        else:
            self._a2a_task(task, result, m)

    @staticmethod
    def _refused(task: Task, request: Message, code: int | None) -> None:
        for entries in (task.cancels, task.answers):
            for entry in [e for e in entries if e[0] == request.t]:
                entries.remove(entry)
                task.refused.append((entry[0], entry[1], code))

    def _result_answer(self, request: Message, m: Message, result: dict[str, Any]) -> None:
        """2025-11-25: tasks/result answers once the task has ended, with the tool's result or error."""
        task = self.tasks.get(f"mcp:{request.params.get('taskId')}")
        if task is None or task.told_terminal_at is not None:
            return
        ended = FAILED if m.error is not None or result.get("isError") is True else COMPLETED
        self._state(task, mcp_state(ended), m.t, m)

    def _cancel_answer(self, request: Message, m: Message, result: dict[str, Any]) -> None:
        key = self._request_task_key(request)
        task = self.tasks.get(key) if key else None
        if task is None or m.error is not None:
            return
        if task.cancel_answered_at is None:
            task.cancel_answered_at = m.t
        if task.protocol == "mcp" and "status" in result:
            self._state(task, mcp_state(result["status"]), m.t, None)
        elif task.protocol == "a2a":
            self._a2a_task(task, result, m)

    def _a2a_result(self, request: Message, m: Message, result: dict[str, Any]) -> None:
        """SendMessage / streaming / subscribe results: a Task, a status or artifact update."""
        payload, a2a_03 = _a2a_payload(result)
        if payload is None:
            return
        task_id = payload.get("id") if "status" in payload and "taskId" not in payload else payload.get("taskId")
        if not task_id:
            return
        key = f"a2a:{task_id}"
        task = self.tasks.get(key)
        if task is None:
            task = self.tasks[key] = Task(str(task_id), "a2a", A2A_03 if a2a_03 else A2A_10, m.t)
            task.tool = _a2a_skill(request)
            task.create_request_id = request.id
        self._a2a_task(task, payload, m)

    def _a2a_task(self, task: Task, payload: dict[str, Any], m: Message) -> None:
        state = as_dict(payload.get("status")).get("state")
        if state is None:
            return
        parsed = a2a_state(state)
        new = task.state is None or task.state.raw != parsed.raw
        self._state(task, parsed, m.t, m)
        if new and parsed.canonical == REJECTED:
            self.findings.task_rejected(task, m.t, status_text(payload))
        if parsed.canonical == COMPLETED and task.id not in self._failing and (bad := failing_artifact(payload)):
            self._failing.add(task.id)
            self.findings.completed_with_failure(task, m.t, *bad)
        if parsed.spelling == "a2a-0.3" and (m.a2a_version == "1.0" or (m.method or "")[:1].isupper()):
            self.findings.mixed_a2a_spelling(task, m, parsed.raw)

    def _notification(self, m: Message) -> None:
        if m.method in ("notifications/tasks/status", "notifications/tasks"):
            task = self.tasks.get(f"mcp:{m.params.get('taskId')}")
            if task is not None:
                self._mcp_fields(task, m.params, m.t, told=False)

    def _elicitation(self, m: Message) -> None:
        """A 2025-11-25 task asks its question with an elicitation/create tagged with the task."""
        task = self.tasks.get(f"mcp:{related_task(m.params)}")
        if task is not None and task.state is not None and task.state.canonical != INPUT_REQUIRED:
            self._state(task, mcp_state(INPUT_REQUIRED), m.t, None)

    # -- state bookkeeping -------------------------------------------------------------------------

    def _state(self, task: Task, state: State, t: float, m: Message | None, *, told: bool = True) -> None:
        if state.canonical == UNKNOWN:
            self.findings.unknown_state(task, t, state.raw)
        states = task.states
        if not states or states[-1][1].raw != state.raw:
            states.append((t, state))
        if state.canonical in TERMINAL:
            if task.terminal_at is None:
                task.terminal_at = t
            if told and task.told_terminal_at is None:
                task.told_terminal_at = t

    def _failed_run(self, task: Task) -> None:
        if task.polls.trailing_failures() == FAILED_RUN:
            self.findings.failed_poll_run(task, task.polls.times[-FAILED_RUN], task.polls.times[-1])

    @staticmethod
    def _key(protocol: str, task_id: Any) -> str | None:
        return f"{protocol}:{task_id}" if task_id not in (None, "") else None

    def _request_task_key(self, request: Message) -> str | None:
        params = request.params
        if request.method in ("GetTask", "CancelTask") or ("id" in params and "taskId" not in params):
            return self._key("a2a", params.get("id"))
        return self._key("mcp", params.get("taskId"))

    def finish(self, end_t: float) -> None:
        for task in self.tasks.values():
            for asked, answered in task.polls.waits(end_t):
                if (answered if answered is not None else end_t) - asked > SLOW_POLL_SECONDS:
                    self.findings.slow_poll(task, asked, answered)


def related_task(params: dict[str, Any]) -> Any:
    return as_dict(as_dict(params.get("_meta")).get("io.modelcontextprotocol/related-task")).get("taskId")


def _a2a_payload(result: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The task-like object in an A2A result, and whether it is spelled the 0.3 way."""
    for key in ("task", "statusUpdate"):
        if isinstance(result.get(key), dict):
            return result[key], False
    if result.get("kind") in ("task", "status-update"):
        return result, True
    if "status" in result and "id" in result:
        return result, False
    return None, False


def _a2a_skill(request: Message) -> str | None:
    metadata = as_dict(as_dict(request.params.get("message")).get("metadata")) or as_dict(
        request.params.get("metadata")
    )
    skill = metadata.get("skill") or metadata.get("skillId")
    return str(skill) if skill else None


def _outcome_unknown(call: Message, *, before: float) -> bool:
    """Whether a tools/call may or may not have run: no answer yet, or an error that says timeout."""
    if call.answered_at is None or call.answered_at > before:
        return True
    if call.answer_error is None:
        return False
    text = str(call.answer_error.get("message", "")).lower()
    return call.answer_error.get("code") == -32001 or "timeout" in text or "timed out" in text
