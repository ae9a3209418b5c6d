"""An MCP server with 2025-11-25 core tasks on the real MCP Python SDK 1.30.0, over stdio.

For tests/e2e/test_report_real_peers.py; runs in the mcp 1.30 venv's python:
``mcp_tasks_server.py [--poll-ms N]``. It is the SDK's documented task server: the lowlevel
``Server`` with ``server.experimental.enable_tasks()``, a tool whose ``execution.taskSupport`` is
``required``, and ``ctx.experimental.run_task(work)`` in ``call_tool``. ``slow_job`` sleeps
``seconds`` in the background and completes with a text result. Every task it creates asks the
client to poll every ``--poll-ms`` milliseconds (the SDK's own default, 500, unless told otherwise).
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.experimental.tasks.in_memory_task_store import InMemoryTaskStore


class IntervalStore(InMemoryTaskStore):
    """The SDK's in-memory store, with every task's ``pollInterval`` set to ours."""

    def __init__(self, poll_ms: int) -> None:
        super().__init__()
        self.poll_ms = poll_ms

    async def create_task(self, metadata: types.TaskMetadata, task_id: str | None = None) -> types.Task:
        task = await super().create_task(metadata, task_id)
        self._tasks[task.taskId].task.pollInterval = self.poll_ms
        task.pollInterval = self.poll_ms
        return task


def build(poll_ms: int) -> Server:
    server: Server = Server("wiretap-report-tasks", version="1.0.0")
    server.experimental.enable_tasks(store=IntervalStore(poll_ms))

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(
                name="slow_job",
                description="Sleeps for `seconds`, as a background task, then reports done.",
                inputSchema={
                    "type": "object",
                    "properties": {"seconds": {"type": "number"}},
                    "required": ["seconds"],
                },
                execution=types.ToolExecution(taskSupport=types.TASK_REQUIRED),
            )
        ]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CreateTaskResult:
        ctx = server.request_context
        ctx.experimental.validate_task_mode(types.TASK_REQUIRED)
        seconds = float(arguments["seconds"])

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            await task.update_status("sleeping")
            await anyio.sleep(seconds)
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"slept {seconds} s")])

        return await ctx.experimental.run_task(work)

    return server


async def serve(poll_ms: int) -> None:
    server = build(poll_ms)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=500)
    anyio.run(serve, parser.parse_args().poll_ms)


if __name__ == "__main__":
    main()
