"""Every ``tools/call`` the client made, as one row each: when it was sent and answered, how (inline, a task,
an error), the progress the server sent for it, the client's cancel, and the ``_meta`` of its answer (where a
server such as the lab's probe states what it was asked to do)."""

from __future__ import annotations

from typing import Any

from wiretap.analysis.conversation import NOTIFICATION, REQUEST, RESPONSE, Message
from wiretap.analysis.model import ToolCall
from wiretap.analysis.tasks import client_declares_extension
from wiretap.recording.events import Direction
from wiretap.wire.json_values import as_dict
from wiretap.wire.jsonrpc import id_key

MAX_CALLS = 2000
"""Calls kept per recording; later ones are counted in ``left_out`` (bounded memory)."""
MAX_PROGRESS = 1000
"""Progress notifications kept per call; the count goes on."""
_READ = frozenset({"tools/call", "notifications/progress", "notifications/cancelled"})


class ToolCalls:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self.left_out = 0
        self._by_id: dict[Any, ToolCall] = {}
        self._by_token: dict[Any, ToolCall] = {}

    def feed(self, m: Message) -> None:
        if m.method not in _READ:
            return
        if m.dir == Direction.C2S and m.kind == REQUEST and m.method == "tools/call":
            self._call(m)
        elif m.dir == Direction.S2C and m.kind == RESPONSE and m.method == "tools/call" and m.request is not None:
            self._answer(m)
        elif m.dir == Direction.S2C and m.kind == NOTIFICATION and m.method == "notifications/progress":
            call = self._by_token.get(id_key(m.params.get("progressToken")))
            if call is not None:
                call.progress_count += 1
                if len(call.progress) < MAX_PROGRESS:
                    call.progress.append(round(m.t, 3))
        elif m.dir == Direction.C2S and m.kind == NOTIFICATION and m.method == "notifications/cancelled":
            call = self._by_id.get(id_key(m.params.get("requestId")))
            if call is not None and call.cancelled_at is None:
                call.cancelled_at = round(m.t, 3)

    def _call(self, m: Message) -> None:
        if len(self.calls) >= MAX_CALLS:
            self.left_out += 1
            return
        params = m.params
        meta = as_dict(params.get("_meta"))
        call = ToolCall(
            t=round(m.t, 3),
            id=m.id,
            tool=str(params.get("name") or ""),
            arguments=as_dict(params.get("arguments")),
            declared_tasks="task" in params or client_declares_extension(params),
            progress_token="progressToken" in meta,
        )
        self.calls.append(call)
        self._by_id[id_key(m.id)] = call
        if "progressToken" in meta:
            self._by_token[id_key(meta["progressToken"])] = call

    def _answer(self, m: Message) -> None:
        assert m.request is not None
        call = self._by_id.pop(id_key(m.request.id), None)
        if call is None or call.answered_at is not None:
            return
        call.answered_at = round(m.t, 3)
        result = as_dict(m.result)
        if m.error is not None:
            call.outcome = "error"
            call.error = m.error_code
            call.meta = as_dict(as_dict(as_dict(m.error).get("data")).get("_meta"))
        elif isinstance(result.get("task"), dict) or result.get("resultType") == "task":
            task = as_dict(result.get("task")) or result
            call.outcome = "task"
            call.task = str(task["taskId"]) if task.get("taskId") is not None else None
            call.meta = {**as_dict(task.get("_meta")), **as_dict(result.get("_meta"))}
        else:
            call.outcome = "inline"
            call.meta = as_dict(result.get("_meta"))
