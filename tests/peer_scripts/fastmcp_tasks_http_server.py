"""A fastmcp 4.1.4 server with the 2026-07-28 tasks extension (fastmcp-tasks), over Streamable HTTP.

For tests/e2e/test_real_mcp_http.py; runs in the fastmcp-tasks venv's python:
``fastmcp_tasks_http_server.py --log FILE``. It binds 127.0.0.1 on a free port, prints its endpoint
URL (``http://127.0.0.1:PORT/mcp``) as the first line of stdout, and serves until SIGINT or SIGTERM.
``slow_sum`` must run as a task (``TaskConfig(mode="required")``) and tells clients to poll every
POLL_INTERVAL_MS; the in-memory docket runs it in this process. Every HTTP exchange the server saw
goes to ``--log`` (``http_wire.ExchangeLog``).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta
from typing import IO

import uvicorn
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from http_wire import ExchangeLog, loopback_socket

POLL_INTERVAL_MS = 200
TASK = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=POLL_INTERVAL_MS))

mcp = FastMCP("wiretap-tasks-peer", version="1.0.0")
mcp.add_extension(TasksExtension())


@mcp.tool(task=TASK)
async def slow_sum(a: int, b: int, seconds: float) -> int:
    """Add two integers, slowly, as a background task."""
    await asyncio.sleep(seconds)
    return a + b


@mcp.tool(task=TASK)
async def slow_fail(seconds: float) -> str:
    """Fail, slowly, as a background task."""
    await asyncio.sleep(seconds)
    raise ToolError("deliberate failure")


async def serve(log: IO[str]) -> None:
    sock = loopback_socket()
    app = ExchangeLog(mcp.http_app(path="/mcp"), log)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    with open(args.log, "a", encoding="utf-8") as log:
        asyncio.run(serve(log))


if __name__ == "__main__":
    main()
