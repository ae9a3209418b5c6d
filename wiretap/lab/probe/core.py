"""The lab's probe MCP server without sockets: a JSON-RPC message and the time go in; the messages to
send, each tied to the request whose stream it belongs on, come out, with lines for the probe's own
log. Delays are timers the core keeps: the transport asks ``next_due()`` and calls ``tick()`` then.

It speaks what the client speaks. A request whose ``_meta`` names a protocol version, or
``server/discover``, gets 2026-07-28 shapes (``resultType`` on every result; tasks through the
``io.modelcontextprotocol/tasks`` extension when the call declares it; no server requests: questions
go in ``inputRequests``). After ``initialize`` the rest gets 2025-11-25 shapes (core tasks when the
call carries ``params.task``; questions as ``elicitation/create`` and ``roots/list`` requests). A call
that asks for no task is answered inline. Every answer about a call states its condition and settings
under ``_meta["wiretap/lab"]``.

Why one module: the probe is one state machine. Inline calls, tasks and the client's answers to its
questions share its clock, its timers and its pending requests; split apart, each part would reach into
the others' state.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wiretap.errors import BadInput
from wiretap.lab.conditions import BY_TOOL, LAB_META, Condition, Kind
from wiretap.lab.probe import shapes
from wiretap.lab.probe.shapes import CLIENT_CAPABILITIES, FORM_KEY, LEGACY, MODERN, PROTOCOL_VERSION, ROOTS_KEY
from wiretap.wire.json_values import as_dict

TERMINAL = {"completed", "failed", "cancelled"}
NOT_FOUND = "Failed to retrieve task: Task not found"
POLL_FAILURE = "Internal error: task store unavailable"
Json = dict[str, Any]


@dataclass(frozen=True)
class Send:
    message: Json
    related: Any = None
    """The id of the request whose response stream this belongs on; None for the session's own."""
    ends: bool = False
    """The final answer to ``related``."""
    note: Json = field(default_factory=dict)
    """What the probe's log says when it is written."""

    @property
    def line(self) -> bytes:
        return json.dumps(self.message, separators=(",", ":")).encode() + b"\n"


@dataclass
class Output:
    sends: list[Send] = field(default_factory=list)
    log: list[Json] = field(default_factory=list)

    def extend(self, other: Output) -> None:
        self.sends += other.sends
        self.log += other.log


@dataclass
class Call:
    """A ``tools/call`` in progress: answered inline later, or the task it made."""

    rid: Any
    condition: Condition
    settings: dict[str, float | None]
    modern: bool
    progress_token: Any = None


@dataclass
class LabTask:
    id: str
    call: Call
    created: float
    ttl: int | None
    state: str = "working"
    updated: float = 0.0
    polls: int = 0
    asked: dict[str, str] = field(default_factory=dict)
    """Legacy: each question's key to the id of the request that asked it."""
    answers: dict[str, Any] = field(default_factory=dict)
    waiting: list[Any] = field(default_factory=list)
    """Legacy: ids of ``tasks/result`` requests held until the task ends."""

    @property
    def unanswered(self) -> list[str]:
        return [k for k in (FORM_KEY, ROOTS_KEY) if k not in self.answers]


class Probe:
    def __init__(self, wall_offset: float = 0.0) -> None:
        """``wall_offset``: wall-clock seconds minus the clock given, for the tasks' timestamps."""
        self.wall_offset = wall_offset
        self.legacy_version: str | None = None
        self.tasks: dict[str, LabTask] = {}
        self.forgotten: set[str] = set()
        self._timers: list[tuple[float, int, Callable[[float], Output]]] = []
        self._order = itertools.count()
        self._made = itertools.count(1)
        self._ask_ids = itertools.count(1)
        self._pending: dict[str, tuple[Any, str]] = {}
        """Our requests to the client: id to (task id or inline call id, question key)."""
        self._inline: dict[Any, Call] = {}
        self._inline_answers: dict[Any, dict[str, Any]] = {}
        self._cancelled: set[Any] = set()

    # -- the transport's side ----------------------------------------------------------------------

    def next_due(self) -> float | None:
        return self._timers[0][0] if self._timers else None

    def tick(self, now: float) -> Output:
        out = Output()
        while self._timers and self._timers[0][0] <= now:
            _, _, action = heapq.heappop(self._timers)
            out.extend(action(now))
        return out

    def receive(self, raw: bytes | str, now: float) -> Output:
        try:
            message = json.loads(raw)
        except ValueError:
            return self._error(None, -32700, "Parse error", False, {"event": "received", "bad": "not JSON"})
        if isinstance(message, list):
            return self._error(None, -32600, "Batch requests are not supported", False, {"event": "received"})
        if not isinstance(message, dict):
            return self._error(None, -32600, "Invalid request", False, {"event": "received"})
        method = message.get("method")
        rid = message.get("id")
        params = as_dict(message.get("params"))
        if not isinstance(method, str):
            return self._response(message, now)
        seen: Json = {"event": "received", "method": method}
        if rid is not None:
            seen["id"] = rid
        if isinstance(params.get("taskId"), str):
            seen["task"] = params["taskId"]
        if rid is None:
            out = self._notification(method, params, now)
            out.log.insert(0, seen)
            return out
        out = self._request(rid, method, params, now)
        out.log.insert(0, seen)
        return out

    def end(self, how: str) -> Json:
        """The log line saying how the probe ended, and which tasks were still live."""
        live = [t.id for t in self.tasks.values() if t.state not in TERMINAL]
        return {"event": "end", "how": how, "live_tasks": live}

    # -- requests ----------------------------------------------------------------------------------

    def _request(self, rid: Any, method: str, params: Json, now: float) -> Output:
        meta = as_dict(params.get("_meta"))
        modern = PROTOCOL_VERSION in meta or method == "server/discover"
        if modern:
            version = meta.get(PROTOCOL_VERSION, MODERN)
            if version not in shapes.SUPPORTED:
                data = {"supported": list(shapes.SUPPORTED), "requested": version}
                return self._error(rid, -32022, "Unsupported protocol version", True, data=data)
        if method == "server/discover":
            return self._result(rid, {**shapes.discover(), **shapes.CACHE}, True)
        if method == "initialize":
            asked = params.get("protocolVersion")
            self.legacy_version = asked if asked in (LEGACY, "2025-06-18", "2025-03-26") else LEGACY
            return self._result(rid, shapes.initialize(self.legacy_version), False)
        if method == "ping":
            return self._result(rid, {}, modern)
        cache = shapes.CACHE if modern else {}
        if method == "tools/list":
            return self._result(rid, {"tools": shapes.tools(legacy=not modern), **cache}, modern)
        if method in ("prompts/list", "resources/list", "resources/templates/list"):
            key = {"prompts/list": "prompts", "resources/list": "resources"}.get(method, "resourceTemplates")
            return self._result(rid, {key: [], **cache}, modern)
        if method == "subscriptions/listen":
            return self._listen(rid, params)
        if method == "tools/call":
            return self._call(rid, params, meta, modern, now)
        if method == "tasks/list" and not modern:
            tasks = [self._task_fields(t, now) for t in self.tasks.values() if not t.call.modern]
            return self._result(rid, {"tasks": tasks}, False)
        if method in ("tasks/get", "tasks/result", "tasks/update", "tasks/cancel"):
            return self._task_request(rid, method, params, modern, now)
        return self._error(rid, -32601, f"Method not found: {method}", modern)

    def _listen(self, rid: Any, params: Json) -> Output:
        """2026-07-28: acknowledge the subscription and hold the request open; the probe sends nothing on it."""
        filters = as_dict(params.get("notifications"))
        meta = {"io.modelcontextprotocol/subscriptionId": rid}
        note = {"event": "sent", "method": "notifications/subscriptions/acknowledged"}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": meta, "notifications": filters},
        }
        return Output([Send(ack, rid, note=note)])

    def _call(self, rid: Any, params: Json, meta: Json, modern: bool, now: float) -> Output:
        name = params.get("name")
        condition = BY_TOOL.get(name) if isinstance(name, str) else None
        if condition is None:
            return self._error(rid, -32602, f"Unknown tool: {name!r}", modern)
        arguments = as_dict(params.get("arguments"))
        try:
            settings = condition.settings(arguments)
        except BadInput as exc:
            lab = {"condition": condition.name, "tool": condition.tool, "refused": str(exc)}
            return self._result(rid, shapes.text_result(str(exc), lab, is_error=True), modern)
        call = Call(rid, condition, settings, modern, meta.get("progressToken"))
        if modern:
            capabilities = as_dict(meta.get(CLIENT_CAPABILITIES))
            extensions = as_dict(capabilities.get("extensions"))
            as_task = shapes.TASKS_EXT in extensions
            if isinstance(params.get("inputResponses"), dict) and condition.tool == "input_task":
                return self._inline_retry(call, params, now)
        else:
            as_task = isinstance(params.get("task"), dict)
            if as_task and condition.kind is not Kind.TASK:
                return self._error(rid, -32601, f"Tool {condition.tool} does not support task-augmented calls", False)
        if as_task and condition.kind is Kind.TASK:
            task_param = as_dict(params.get("task"))
            ttl = task_param.get("ttl") if isinstance(task_param.get("ttl"), int) else shapes.TTL_MS
            return self._start_task(call, ttl, now)
        return self._start_inline(call, now)

    # -- inline answers ----------------------------------------------------------------------------

    def _lab(self, call: Call, answer: str, task: str | None = None) -> Json:
        lab: Json = {"condition": call.condition.name, "tool": call.condition.tool, "settings": call.settings}
        lab |= {"answer": answer, "revision": MODERN if call.modern else (self.legacy_version or LEGACY)}
        if task is not None:
            lab["task"] = task
        return lab

    def _start_inline(self, call: Call, now: float) -> Output:
        self._inline[call.rid] = call
        s, tool = call.settings, call.condition.tool
        out = Output(log=[{"event": "call", "id": call.rid, "condition": call.condition.name, "answer": "inline"}])
        if tool == "endless_task":
            return out
        if tool == "input_task":
            self._at(now + _f(s["after_s"]), lambda t: self._inline_ask(call))
            return out
        if tool == "progress_call":
            count, every = int(_f(s["count"])), _f(s["every_s"])
            if call.progress_token is not None:
                for n in range(1, count + 1):
                    self._at(now + n * every, functools.partial(self._progress, call, n, count))
            self._at(now + count * every, lambda t: self._inline_done(call, f"sent {count} progress notifications"))
            return out
        seconds = _f(s.get("forget_after_s") if tool == "forgotten_task" else s["seconds"])
        self._at(now + seconds, lambda t: self._inline_done(call, f"answered inline after {seconds:g} s"))
        return out

    def _progress(self, call: Call, n: int, count: int, now: float) -> Output:
        if call.rid not in self._inline:
            return Output()
        params = {"progressToken": call.progress_token, "progress": n, "total": count, "message": f"step {n}/{count}"}
        message = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
        return Output([Send(message, call.rid, note={"event": "sent", "method": "notifications/progress", "n": n})])

    def _inline_done(self, call: Call, text: str) -> Output:
        if self._inline.pop(call.rid, None) is None:
            return Output()
        result = shapes.text_result(f"{call.condition.tool}: {text}", self._lab(call, "inline"))
        return self._result(call.rid, result, call.modern)

    def _inline_ask(self, call: Call) -> Output:
        if call.rid not in self._inline:
            return Output()
        if call.modern:
            # MRTR: the questions are the answer; the client retries the call with inputResponses.
            self._inline.pop(call.rid)
            result = {
                "resultType": "input_required",
                "inputRequests": shapes.input_requests([FORM_KEY, ROOTS_KEY], None),
                "requestState": "lab-input-task",
                "_meta": {LAB_META: self._lab(call, "inline")},
            }
            return self._result(call.rid, result, True)
        self._inline_answers[call.rid] = {}
        return self._asks(call.rid, None, [FORM_KEY, ROOTS_KEY], call.rid)

    def _inline_retry(self, call: Call, params: Json, now: float) -> Output:
        responses = params["inputResponses"]
        missing = [k for k in (FORM_KEY, ROOTS_KEY) if k not in responses]
        if missing:
            result = {
                "resultType": "input_required",
                "inputRequests": shapes.input_requests(missing, None),
                "requestState": "lab-input-task",
                "_meta": {LAB_META: self._lab(call, "inline")},
            }
            return self._result(call.rid, result, True)
        text = f"{call.condition.tool}: answered with {_answers(responses)}"
        return self._result(call.rid, shapes.text_result(text, self._lab(call, "inline")), True)

    def _asks(self, owner: Any, task_id: str | None, keys: list[str], related: Any) -> Output:
        """Legacy: the questions as requests to the client, on ``related``'s stream."""
        out = Output()
        for key in keys:
            ask_id = f"lab-ask-{next(self._ask_ids)}"
            self._pending[ask_id] = (owner, key)
            request = {"jsonrpc": "2.0", "id": ask_id, **shapes.ask(key, task_id, legacy=True)}
            note = {"event": "sent", "id": ask_id, "method": request["method"], "task": task_id}
            out.sends.append(Send(request, related, note={k: v for k, v in note.items() if v is not None}))
        return out

    # -- tasks -------------------------------------------------------------------------------------

    def _start_task(self, call: Call, ttl: int | None, now: float) -> Output:
        task = LabTask(f"lab-{next(self._made)}-{call.condition.name}", call, now, ttl, updated=now)
        self.tasks[task.id] = task
        s, tool = call.settings, call.condition.tool
        if tool in ("poll_task", "failing_polls_task"):
            self._at(now + _f(s["seconds"]), lambda t: self._set(task, "completed", t))
        elif tool == "input_task":
            self._at(now + _f(s["after_s"]), lambda t: self._need_input(task, t))
        elif tool == "forgotten_task":
            self._at(now + _f(s["forget_after_s"]), lambda t: self._forget(task))
        fields = self._task_fields(task, now)
        lab = self._lab(call, "task", task.id)
        if call.modern:
            result = {"resultType": "task", **fields, "_meta": {LAB_META: lab}}
        else:
            result = {"task": fields, "_meta": {LAB_META: lab}}
        out = Output(log=[{"event": "task", "task": task.id, "state": "working", "condition": call.condition.name}])
        out.extend(self._result(call.rid, result, call.modern, task=task))
        return out

    def _task_fields(self, task: LabTask, now: float) -> Json:
        interval = task.call.settings.get("interval_ms")
        fields: Json = {
            "taskId": task.id,
            "status": task.state,
            "createdAt": shapes.iso(task.created + self.wall_offset),
            "lastUpdatedAt": shapes.iso(task.updated + self.wall_offset),
        }
        if task.call.modern:
            fields["ttlMs"] = task.ttl
            if interval is not None:
                fields["pollIntervalMs"] = int(interval)
        else:
            fields["ttl"] = task.ttl
            if interval is not None:
                fields["pollInterval"] = int(interval)
        return fields

    def _set(self, task: LabTask, state: str, now: float) -> Output:
        if task.state in TERMINAL or task.id not in self.tasks:
            return Output()
        task.state, task.updated = state, now
        out = Output(log=[{"event": "task", "task": task.id, "state": state, "condition": task.call.condition.name}])
        if not task.call.modern:
            status = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": self._task_fields(task, now)}
            note = {"event": "sent", "method": "notifications/tasks/status", "task": task.id, "status": state}
            # On a held tasks/result's stream when there is one (over HTTP the only place for it).
            out.sends.append(Send(status, task.waiting[0] if task.waiting else None, note=note))
            if state in TERMINAL:
                for rid in task.waiting:
                    out.extend(self._task_result(rid, task))
                task.waiting.clear()
        return out

    def _need_input(self, task: LabTask, now: float) -> Output:
        out = self._set(task, "input_required", now)
        if not task.call.modern and task.waiting:
            out.extend(self._asks(task.id, task.id, task.unanswered, task.waiting[0]))
            task.asked = dict.fromkeys(task.unanswered, "asked")
        return out

    def _forget(self, task: LabTask) -> Output:
        if self.tasks.pop(task.id, None) is None:
            return Output()
        self.forgotten.add(task.id)
        out = Output(log=[{"event": "forgotten", "task": task.id, "condition": task.call.condition.name}])
        for rid in task.waiting:
            out.extend(self._error(rid, -32602, NOT_FOUND, False, task=task.id))
        return out

    def _task_request(self, rid: Any, method: str, params: Json, modern: bool, now: float) -> Output:
        task_id = params.get("taskId")
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            return self._error(rid, -32602, NOT_FOUND, modern, task=task_id if isinstance(task_id, str) else None)
        modern = task.call.modern
        lab = {LAB_META: self._lab(task.call, "task", task.id)}
        if method == "tasks/get":
            task.polls += 1
            failures = task.call.settings.get("failures")
            if failures is not None and task.polls <= failures:
                data = {LAB_META: {**lab[LAB_META], "failed_poll": task.polls}}
                return self._error(rid, -32603, POLL_FAILURE, modern, task=task.id, data=data)
            fields = self._task_fields(task, now)
            if modern and task.state == "completed":
                fields["result"] = self._final(task)
            if modern and task.state == "input_required":
                fields["inputRequests"] = shapes.input_requests(task.unanswered, task.id)
            return self._result(rid, {**fields, "_meta": lab}, modern, task=task)
        if method == "tasks/cancel":
            if task.state in TERMINAL and not modern:
                message = f"Cannot cancel task: already in terminal status '{task.state}'"
                return self._error(rid, -32602, message, False, task=task.id)
            out = self._set(task, "cancelled", now)
            if modern:
                out.extend(self._result(rid, {"_meta": lab}, True, task=task, ack=True))
            else:
                out.extend(self._result(rid, {**self._task_fields(task, now), "_meta": lab}, False, task=task))
            return out
        if method == "tasks/update":
            if not modern:
                return self._error(rid, -32601, "Method not found: tasks/update", False)
            responses = as_dict(params.get("inputResponses"))
            for key in task.unanswered:
                if key in responses:
                    task.answers[key] = responses[key]
            out = Output(log=[{"event": "answers", "task": task.id, "keys": sorted(responses)}])
            out.extend(self._result(rid, {"_meta": lab}, True, task=task, ack=True))
            if task.state == "input_required" and not task.unanswered:
                out.extend(self._set(task, "completed", now))
            return out
        # tasks/result (2025-11-25): held until the task ends, asking its questions on this stream.
        if modern:
            return self._error(rid, -32601, "Method not found: tasks/result", True)
        if task.state in TERMINAL:
            return self._task_result(rid, task)
        task.waiting.append(rid)
        if task.state == "input_required" and not task.asked:
            task.asked = dict.fromkeys(task.unanswered, "asked")
            return self._asks(task.id, task.id, task.unanswered, rid)
        return Output()

    def _final(self, task: LabTask) -> Json:
        tool, s = task.call.condition.tool, task.call.settings
        if tool == "input_task":
            text = f"{tool}: answered with {_answers(task.answers)}"
        elif tool == "failing_polls_task":
            text = f"{tool}: completed after {_f(s['seconds']):g} s; {int(_f(s['failures']))} polls failed first"
        else:
            text = f"{tool}: completed after {_f(s.get('seconds', 0)):g} s"
        return shapes.text_result(text, self._lab(task.call, "task", task.id))

    def _task_result(self, rid: Any, task: LabTask) -> Output:
        related = {shapes.RELATED: {"taskId": task.id}}
        if task.state == "cancelled":
            return self._error(rid, -32603, f"Task {task.id} was cancelled", False, task=task.id)
        result = self._final(task)
        result["_meta"] = {**result["_meta"], **related}
        return self._result(rid, result, False, task=task)

    # -- responses from the client and notifications -------------------------------------------

    def _response(self, message: Json, now: float) -> Output:
        rid = message.get("id")
        seen: Json = {"event": "received", "answer_to": rid, "ok": "result" in message}
        owner = self._pending.pop(rid, None) if isinstance(rid, str) else None
        out = Output(log=[seen])
        if owner is None:
            return out
        owner_id, key = owner
        answer = message.get("result", message.get("error"))
        if isinstance(owner_id, str) and owner_id in self.tasks:
            task = self.tasks[owner_id]
            task.answers[key] = answer
            if task.state == "input_required" and not task.unanswered:
                out.extend(self._set(task, "working", now))
                out.extend(self._set(task, "completed", now))
        elif owner_id in self._inline_answers:
            answers = self._inline_answers[owner_id]
            answers[key] = answer
            if len(answers) == 2:
                call = self._inline.get(owner_id)
                del self._inline_answers[owner_id]
                if call is not None:
                    out.extend(self._inline_done(call, f"answered with {_answers(answers)}"))
        return out

    def _notification(self, method: str, params: Json, now: float) -> Output:
        if method == "notifications/cancelled":
            return self.closed(params.get("requestId"), "call-cancelled")
        return Output()

    def closed(self, rid: Any, event: str = "stream-closed") -> Output:
        """An inline call the client gave up on (``notifications/cancelled``, or its HTTP stream closed)."""
        if self._inline.pop(rid, None) is None:
            return Output()
        self._inline_answers.pop(rid, None)
        return Output(log=[{"event": event, "id": rid}])

    # -- envelopes ---------------------------------------------------------------------------------

    def _at(self, when: float, action: Callable[[float], Output]) -> None:
        heapq.heappush(self._timers, (when, next(self._order), action))

    def _result(self, rid: Any, result: Json, modern: bool, task: LabTask | None = None, ack: bool = False) -> Output:
        """``ack``: an empty 2026-07-28 acknowledgement about ``task``, which states no status on the wire."""
        if modern:
            result = {"resultType": "complete", **result}
        note: Json = {"event": "sent", "answer_to": rid}
        if task is not None:
            note |= {"task": task.id} if ack else {"task": task.id, "status": task.state}
        return Output([Send({"jsonrpc": "2.0", "id": rid, "result": result}, rid, True, note)])

    def _error(
        self,
        rid: Any,
        code: int,
        text: str,
        modern: bool,
        received: Json | None = None,
        task: str | None = None,
        data: Any = None,
    ) -> Output:
        error: Json = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        note: Json = {"event": "sent", "answer_to": rid, "error": code}
        if task is not None:
            note["task"] = task
        out = Output([Send({"jsonrpc": "2.0", "id": rid, "error": error}, rid, True, note)])
        if received is not None:
            out.log.append(received)
        return out


def _f(value: float | None) -> float:
    return float(value or 0)


def _answers(responses: Any) -> str:
    return json.dumps(responses, separators=(",", ":"), sort_keys=True)
