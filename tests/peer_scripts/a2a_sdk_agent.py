"""An A2A agent on the real a2a-sdk 1.3.0, for tests/e2e/test_real_a2a.py.

Runs in the peer venv's python, not the test python: ``a2a_sdk_agent.py --request-log FILE``.
It binds 127.0.0.1 on a free port, prints its base URL as the first line of stdout, and serves
until SIGINT or SIGTERM (uvicorn):

- the agent card at ``/.well-known/agent-card.json``, with four interfaces: JSON-RPC and HTTP+JSON
  1.0 at ``/a2a/jsonrpc`` and ``/a2a/rest``, and the same two again as 0.3 (so that a2a-sdk also
  merges the 0.3 fields ``url``, ``preferredTransport`` and ``additionalInterfaces`` into the card);
- JSON-RPC at ``/a2a/jsonrpc`` with ``enable_v0_3_compat=True`` (the 0.3 slash methods too);
- REST (HTTP+JSON) under ``/a2a/rest``, with the 0.3 ``/a2a/rest/v1/...`` routes too.

The executor: a message starting with ``ask`` goes working -> input-required ("Which city?"), and
the follow-up message on that task goes working -> artifact ``forecast`` -> completed; any other
message goes working -> artifact ``report`` -> completed. Cancel marks the task canceled.

Every HTTP request the agent receives is logged to FILE as JSON Lines, by an ASGI middleware that
sits in front of everything: ``{"n", "method", "path", "query", "headers"}`` on arrival, then
``{"n", "body"}`` (what it read), ``{"n", "status"}`` and ``{"n", "sent", "sent_bytes"}`` (what it
wrote). With ``--gzip`` the responses go through Starlette's GZipMiddleware, as in many deployments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware

STEP = 0.05
"""A pause between a task's events, so that a stream really is one event at a time."""


class DemoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        resumed = task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        await updater.start_work()
        await asyncio.sleep(STEP)
        if resumed:
            await updater.add_artifact([new_text_part(f"sunny in {text}")], name="forecast")
            await asyncio.sleep(STEP)
            await updater.complete(updater.new_agent_message([new_text_part("forecast ready")]))
        elif text.startswith("ask"):
            await updater.requires_input(updater.new_agent_message([new_text_part("Which city?")]))
        else:
            await updater.add_artifact([new_text_part(f"report on {text}")], name="report")
            await asyncio.sleep(STEP)
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class RequestLog:
    """ASGI middleware: every request this process receives, what it read and what it answered."""

    def __init__(self, app: Any, path: str) -> None:
        self.app = app
        self.path = path
        self.numbers = itertools.count(1)

    def log(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        n = next(self.numbers)
        self.log(
            {
                "n": n,
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode("latin-1"),
                "http_version": scope["http_version"],
                "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
            }
        )
        # Read the whole body first (a route may never read it, e.g. REST cancel), then replay it.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                break
        self.log({"n": n, "body": body.decode("utf-8", errors="replace")})
        replayed = False
        sent = bytearray()

        async def logged_receive() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        async def logged_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.log({"n": n, "status": message["status"]})
            elif message["type"] == "http.response.body":
                sent.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, logged_receive, logged_send)
        finally:
            self.log({"n": n, "sent": sent.decode("utf-8", errors="replace"), "sent_bytes": len(sent)})


def agent_card(base: str) -> AgentCard:
    return AgentCard(
        name="wiretap-a2a-peer",
        description="A test agent for wiretap: reports, and asks which city.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base}/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=f"{base}/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="report",
                name="report",
                description="Writes a report; 'ask' asks for a city first.",
                tags=["test"],
            )
        ],
    )


def build_app(base: str, request_log: str, *, gzip: bool) -> Any:
    card = agent_card(base)
    handler = DefaultRequestHandler(agent_executor=DemoExecutor(), task_store=InMemoryTaskStore(), agent_card=card)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await handler.aclose()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc", enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix="/a2a/rest", enable_v0_3_compat=True),
    ]
    app: Any = Starlette(routes=routes, lifespan=lifespan)
    if gzip:  # what a deployment often adds; Starlette's leaves text/event-stream alone
        app = GZipMiddleware(app, minimum_size=500)
    return RequestLog(app, request_log)


async def serve(request_log: str, *, gzip: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue up from now on, so the URL may be printed at once
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(build_app(base, request_log, gzip=gzip), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    print(base, flush=True)
    await server.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--request-log", required=True)
    parser.add_argument("--gzip", action="store_true", help="compress responses of 500 bytes or more")
    args = parser.parse_args()
    asyncio.run(serve(args.request_log, gzip=args.gzip))


if __name__ == "__main__":
    main()
