"""The real a2a-sdk 1.3.0 client against ``wiretap lab serve --a2a``, for tests/e2e/test_lab_a2a_real.py.

Runs in the a2a-sdk venv's python: ``a2a_lab_sdk_client.py URL``. For each of the card's 1.0 bindings
(JSON-RPC, then HTTP+JSON) it sends, with ``ClientConfig(polling=True)`` (``returnImmediately``), one
message per condition and polls what needs polling with ``get_task`` every 0.2 s:

- ``slow 1``: polled until completed (each poll's call and return kept on ``time.monotonic()``);
- ``reject out of scope``, ``failing-artifact``: ended at once;
- ``input-required`` and ``auth-required``: answered with a follow-up message on the task;
- ``done``: then a message to it and a cancel of it (the agent refuses both).

It prints one JSON object per binding: each task as a2a-sdk parsed it, and the error class of each refusal.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import CancelTaskRequest, GetTaskRequest, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict

BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
TERMINAL = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED}


def request(text: str, task: Any = None) -> SendMessageRequest:
    message = new_text_message(
        text,
        role=Role.ROLE_USER,
        task_id=None if task is None else task.id,
        context_id=None if task is None else task.context_id,
    )
    return SendMessageRequest(message=message)


async def refused(call: Any) -> str | None:
    try:
        await call
    except Exception as exc:  # which error class a2a-sdk raises is part of the result
        return type(exc).__name__
    return None


async def run_binding(http: httpx.AsyncClient, url: str, binding: str) -> dict[str, Any]:
    config = ClientConfig(
        streaming=False, polling=True, httpx_client=http, supported_protocol_bindings=[BINDINGS[binding]]
    )
    out: dict[str, Any] = {}
    async with await create_client(url, config) as client:

        async def send(text: str, task: Any = None) -> Any:
            [event] = [e async for e in client.send_message(request(text, task))]
            return event.task

        task = await send("slow 1")
        polls = []
        while task.status.state not in TERMINAL:
            await asyncio.sleep(0.2)
            sent = time.monotonic()
            task = await client.get_task(GetTaskRequest(id=task.id))
            polls.append([sent, time.monotonic()])
        out["slow"] = {"task": MessageToDict(task), "polls": polls}
        for text in ("reject out of scope", "failing-artifact"):
            out[text.split()[0]] = MessageToDict(await send(text))
        for condition in ("input-required", "auth-required"):
            asked = await send(condition)
            out[condition] = [MessageToDict(asked), MessageToDict(await send("Paris", asked))]
        done = await send("done")
        out["done"] = MessageToDict(done)
        out["message_to_done"] = await refused(send("more", done))
        out["cancel_done"] = await refused(client.cancel_task(CancelTaskRequest(id=done.id)))
    return out


async def run(url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=20) as http:
        return {name: await run_binding(http, url, name) for name in BINDINGS}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(sys.argv[1])), sort_keys=True))
