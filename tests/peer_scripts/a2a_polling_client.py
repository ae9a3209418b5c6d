"""An A2A client on the real a2a-sdk 1.3.0 that polls one task and streams two, for
tests/e2e/test_report_real_peers.py.

Runs in the a2a-sdk venv's python: ``a2a_polling_client.py URL [--poll SECONDS]``. For each of the
card's 1.0 bindings (JSON-RPC, then HTTP+JSON) it:

- polls: ``ClientConfig(streaming=False, polling=True)`` makes ``send_message`` return at once
  (``configuration.returnImmediately``); a2a-sdk leaves the polling loop to its caller ("It is the
  callers job to check if the response is completed and if not run a polling loop"), so this one
  calls ``get_task`` every ``--poll`` seconds until the task is terminal;
- streams: ``SendStreamingMessage`` of a slow task to its end;
- asks: a streamed message that stops at input-required, then the follow-up message on that task,
  streamed to completion.

It prints one JSON object per binding: the states it saw (with ``time.monotonic()`` offsets for the
polls) and each task's final state.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import GetTaskRequest, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict

BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


def request(text: str, task: Any = None) -> SendMessageRequest:
    message = new_text_message(
        text,
        role=Role.ROLE_USER,
        task_id=None if task is None else task.id,
        context_id=None if task is None else task.context_id,
    )
    return SendMessageRequest(message=message)


def state_name(state: int) -> str:
    return str(TaskState.Name(state))


async def run_binding(http: httpx.AsyncClient, url: str, binding: str, poll: float) -> dict[str, Any]:
    def config(streaming: bool) -> ClientConfig:
        return ClientConfig(
            streaming=streaming,
            polling=not streaming,
            httpx_client=http,
            supported_protocol_bindings=[BINDINGS[binding]],
        )

    out: dict[str, Any] = {}
    async with await create_client(url, config(streaming=False)) as polling:
        [first] = [event async for event in polling.send_message(request("slow 6"))]
        task = first.task
        t0 = time.monotonic()
        seen = [[0.0, state_name(task.status.state)]]
        while task.status.state not in TERMINAL:
            await asyncio.sleep(poll)
            task = await polling.get_task(GetTaskRequest(id=task.id))
            seen.append([round(time.monotonic() - t0, 3), state_name(task.status.state)])
        out["polled"] = {"id": task.id, "states": seen}
    async with await create_client(url, config(streaming=True)) as streaming:
        events = [MessageToDict(e) async for e in streaming.send_message(request("slow 3"))]
        out["streamed"] = events
        asked = [event async for event in streaming.send_message(request("ask for a forecast"))]
        asked_task = asked[0].task
        out["asked"] = [MessageToDict(e) for e in asked]
        out["answered"] = [MessageToDict(e) async for e in streaming.send_message(request("Paris", asked_task))]
    return out


async def run(url: str, poll: float) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=20) as http:
        return {name: await run_binding(http, url, name, poll) for name in BINDINGS}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--poll", type=float, default=0.25)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.url, args.poll)), sort_keys=True))


if __name__ == "__main__":
    main()
