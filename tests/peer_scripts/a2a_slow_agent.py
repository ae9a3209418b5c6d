"""An A2A agent on the real a2a-sdk 1.3.0 whose tasks take long enough to be polled.

For tests/e2e/test_report_real_peers.py; runs in the a2a-sdk venv's python: ``a2a_slow_agent.py``. It
binds 127.0.0.1 on a free port, prints its base URL as the first line of stdout, and serves until
SIGINT or SIGTERM (uvicorn). The card offers JSON-RPC 1.0 at ``/a2a/jsonrpc`` and HTTP+JSON 1.0 at
``/a2a/rest`` (``DefaultRequestHandler`` + ``InMemoryTaskStore``).

The executor: a message ``slow N`` goes working, then works N steps of STEP seconds (a status update
each), adds an artifact and completes; a message starting with ``ask`` goes working ->
input-required ("Which city?"), and the follow-up message on that task goes working -> artifact ->
completed. Cancel marks the task canceled.
"""

from __future__ import annotations

import asyncio
import contextlib
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

STEP = 0.25


class SlowExecutor(AgentExecutor):
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
        if resumed:
            await asyncio.sleep(STEP)
            await updater.add_artifact([new_text_part(f"sunny in {text}")], name="forecast")
            await updater.complete()
        elif text.startswith("ask"):
            await asyncio.sleep(STEP)
            await updater.requires_input(updater.new_agent_message([new_text_part("Which city?")]))
        else:
            steps = int(text.split()[1]) if text.startswith("slow ") else 1
            for step in range(1, steps + 1):
                await asyncio.sleep(STEP)
                await updater.start_work(updater.new_agent_message([new_text_part(f"step {step}/{steps}")]))
            await updater.add_artifact([new_text_part(f"done after {steps} steps")], name="report")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(base: str) -> AgentCard:
    return AgentCard(
        name="wiretap-slow-a2a-peer",
        description="A test agent for wiretap: slow reports, and asks which city.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base}/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="report", name="report", description="Slow reports.", tags=["test"])],
    )


def build_app(base: str) -> Any:
    card = agent_card(base)
    handler = DefaultRequestHandler(agent_executor=SlowExecutor(), task_store=InMemoryTaskStore(), agent_card=card)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await handler.aclose()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc"),
        *create_rest_routes(handler, path_prefix="/a2a/rest"),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def serve() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(build_app(base), log_level="warning", lifespan="on"))
    print(base, flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(serve())
