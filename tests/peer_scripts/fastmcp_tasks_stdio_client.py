"""A fastmcp 4.1.4 client calling a tool as a 2026-07-28 task (fastmcp-tasks), over stdio.

For tests/e2e/test_report_real_peers.py; runs in the fastmcp-tasks venv's python:
``fastmcp_tasks_stdio_client.py TOOL ARGS_JSON -- SERVER [ARGS...]``. It calls TOOL with
``call_tool_task`` (the server answers ``resultType: "task"`` at once) and drives the handle with
``ToolTask.result()``, whose poller (``_drive_to_terminal``) polls ``tasks/get`` at once, then sleeps
20 ms, doubling each round up to the server's ``pollIntervalMs``. It prints one JSON object: the
create result (less ids and times) and the final result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp_tasks import call_tool_task

VARYING = {"taskId", "createdAt", "lastUpdatedAt"}


async def run(tool: str, arguments: dict[str, Any], command: list[str]) -> dict[str, Any]:
    transport = StdioTransport(command[0], command[1:], keep_alive=False)
    async with Client(transport, timeout=60) as client:
        task = await call_tool_task(client, tool, arguments)
        created = task.create_result.model_dump(mode="json", by_alias=True, exclude_none=True)
        result = await task.result()
        return {
            "created": {k: v for k, v in created.items() if k not in VARYING},
            "result": [block.model_dump(mode="json", exclude_none=True) for block in result.content],
            "is_error": result.is_error,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("arguments", type=json.loads)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.tool, args.arguments, args.command)), sort_keys=True))


if __name__ == "__main__":
    main()
