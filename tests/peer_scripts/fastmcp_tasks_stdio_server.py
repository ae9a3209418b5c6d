"""A fastmcp 4.1.4 server with the 2026-07-28 tasks extension (fastmcp-tasks), over stdio.

For tests/e2e/test_report_real_peers.py; runs in the fastmcp-tasks venv's python:
``fastmcp_tasks_stdio_server.py [--poll-ms N]``. ``slow_job`` must run as a task
(``TaskConfig(mode="required")``), sleeps ``seconds`` and tells clients to poll every ``--poll-ms``
milliseconds (``pollIntervalMs``, default 1000); the in-memory docket runs it in this process.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta

from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension


def build(poll_ms: int) -> FastMCP:
    mcp = FastMCP("wiretap-report-fastmcp-tasks", version="1.0.0")
    mcp.add_extension(TasksExtension())
    task = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=poll_ms))

    @mcp.tool(task=task)
    async def slow_job(seconds: float) -> str:
        """Sleep for `seconds` as a background task, then report done."""
        await asyncio.sleep(seconds)
        return f"slept {seconds} s"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=1000)
    build(parser.parse_args().poll_ms).run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
