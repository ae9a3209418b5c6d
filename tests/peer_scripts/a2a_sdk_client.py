"""An A2A client on the real a2a-sdk 1.3.0, for tests/e2e/test_real_a2a.py.

Runs in the peer venv's python, not the test python: ``a2a_sdk_client.py URL``. URL is all it is
given (the agent's, or a proxy's): it resolves the agent card from there and then talks to the URLs
inside the card, as every a2a-sdk client does. It runs the same calls over four bindings:

- ``jsonrpc`` and ``rest``: ``create_client(URL, ClientConfig(supported_protocol_bindings=[...]))``,
  which picks the card's 1.0 interface (JsonRpcTransport, RestTransport);
- ``jsonrpc-0.3`` and ``rest-0.3``: the card as a 0.3 client reads it (``url``, ``preferredTransport``,
  ``additionalInterfaces``, with ``supportedInterfaces`` dropped), which gives a2a-sdk's 0.3
  compat transports.

Each binding: a blocking SendMessage that completes, GetTask, a SendMessage that stops at
input-required, CancelTask on it, GetTask again, GetTask on an unknown id (an error), then the
streaming calls: SendStreamingMessage that completes, one that stops at input-required, and the
follow-up message that completes that task. It prints one JSON object: what it got (as
``MessageToDict`` gives it), the card it was served, and every HTTP request it made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers import new_text_message
from a2a.types import AgentCard, CancelTaskRequest, GetTaskRequest, Role, SendMessageRequest
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message as Proto

BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "jsonrpc-0.3": "JSONRPC", "rest-0.3": "HTTP+JSON"}


def dump(proto: Proto) -> dict[str, Any]:
    return MessageToDict(proto)


def request(text: str, task: dict[str, Any] | None = None) -> SendMessageRequest:
    message = new_text_message(
        text,
        role=Role.ROLE_USER,
        task_id=None if task is None else task["id"],
        context_id=None if task is None else task["contextId"],
    )
    return SendMessageRequest(message=message)


def final_task(events: list[dict[str, Any]]) -> dict[str, Any]:
    [task] = [event["task"] for event in events if "task" in event]
    return task


async def legacy_card(http: httpx.AsyncClient, url: str) -> AgentCard:
    """The card as a 0.3 client reads it: its 0.3 fields only."""
    response = await http.get(url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH)
    response.raise_for_status()
    card = response.json()
    del card["supportedInterfaces"]
    return parse_agent_card(card)


async def run_binding(http: httpx.AsyncClient, url: str, binding: str) -> dict[str, Any]:
    def config(streaming: bool) -> ClientConfig:
        return ClientConfig(streaming=streaming, httpx_client=http, supported_protocol_bindings=[BINDINGS[binding]])

    async def client(streaming: bool) -> Any:
        if binding.endswith("-0.3"):
            return ClientFactory(config(streaming)).create(await legacy_card(http, url))
        return await create_client(url, config(streaming))

    out: dict[str, Any] = {}
    async with await client(streaming=False) as blocking:
        out["send"] = [dump(e) async for e in blocking.send_message(request("the quarter"))]
        done = final_task(out["send"])
        out["get"] = dump(await blocking.get_task(GetTaskRequest(id=done["id"])))
        out["send_ask"] = [dump(e) async for e in blocking.send_message(request("ask for a forecast"))]
        asked = final_task(out["send_ask"])
        out["cancel"] = dump(await blocking.cancel_task(CancelTaskRequest(id=asked["id"])))
        out["get_canceled"] = dump(await blocking.get_task(GetTaskRequest(id=asked["id"])))
        try:
            await blocking.get_task(GetTaskRequest(id="no-such-task"))
            out["get_missing"] = None
        except Exception as exc:  # which error class a2a-sdk raises is part of the result
            out["get_missing"] = type(exc).__name__
    async with await client(streaming=True) as streaming:
        out["stream"] = [dump(e) async for e in streaming.send_message(request("the year"))]
        out["stream_ask"] = [dump(e) async for e in streaming.send_message(request("ask for a forecast"))]
        asked = out["stream_ask"][0]["task"]
        out["stream_answer"] = [dump(e) async for e in streaming.send_message(request("Paris", asked))]
    return out


async def run(url: str) -> dict[str, Any]:
    requests: list[list[str]] = []
    cards: list[Any] = []

    async def on_request(req: httpx.Request) -> None:
        requests.append([req.method, str(req.url)])

    async def on_response(response: httpx.Response) -> None:
        if response.url.path == AGENT_CARD_WELL_KNOWN_PATH:
            await response.aread()
            cards.append(response.json())

    hooks = {"request": [on_request], "response": [on_response]}
    async with httpx.AsyncClient(event_hooks=hooks, timeout=20) as http:
        report: dict[str, Any] = {name: await run_binding(http, url, name) for name in BINDINGS}
    report["cards"] = cards
    report["requests"] = requests
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.url)), sort_keys=True))


if __name__ == "__main__":
    main()
