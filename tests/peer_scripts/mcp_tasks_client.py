"""An MCP client calling a tool as a 2025-11-25 task, on the real MCP Python SDK 1.30.0, over stdio.

For tests/e2e/test_report_real_peers.py; runs in the mcp 1.30 venv's python:
``mcp_tasks_client.py TOOL ARGS_JSON -- SERVER [ARGS...]``. It follows the SDK's documented
pattern (docs/experimental/tasks-client.md): ``session.experimental.call_tool_as_task``, then
``poll_task`` (which polls ``tasks/get`` and sleeps the server's ``pollInterval`` between polls);
when a poll says ``input_required`` it calls ``get_task_result`` (``tasks/result``), through which the
server delivers its ``elicitation/create`` and which returns once the task is terminal, and stops
polling; ``elicitation_callback`` accepts with the first choice the schema offers. A task that never
asks is polled until terminal, then its result fetched.

It prints one JSON object: the create result, every status it saw (``time.monotonic()`` of each,
relative to the create result), the elicitation it answered and the final result.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.context import RequestContext

warnings.simplefilter("ignore", DeprecationWarning)  # "the experimental tasks API is deprecated"


def first_choice(schema: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for key, prop in schema.get("properties", {}).items():
        options = prop.get("oneOf") or [{"const": v} for v in prop.get("enum", [])]
        answer[key] = options[0]["const"] if options else "yes"
    return answer


async def run(tool: str, arguments: dict[str, Any], command: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"elicitations": [], "statuses": []}

    async def on_elicit(
        context: RequestContext[ClientSession, Any], params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        content = first_choice(getattr(params, "requestedSchema", {}) or {})
        report["elicitations"].append({"message": params.message, "answer": content})
        return types.ElicitResult(action="accept", content=content)

    server = StdioServerParameters(command=command[0], args=command[1:])
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=on_elicit) as session,
    ):
        await session.initialize()
        await session.list_tools()
        created = await session.experimental.call_tool_as_task(tool, arguments)
        t0 = time.monotonic()
        report["created"] = created.task.model_dump(mode="json", exclude_none=True)
        task_id = created.task.taskId
        result: types.CallToolResult | None = None
        async for status in session.experimental.poll_task(task_id):
            report["statuses"].append([round(time.monotonic() - t0, 3), status.status])
            if status.status == "input_required":
                # tasks/result delivers the queued elicitation, then blocks until the task is terminal.
                result = await session.experimental.get_task_result(task_id, types.CallToolResult)
                break
        if result is None:
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        report["result"] = result.model_dump(mode="json", exclude_none=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("arguments", type=json.loads)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.tool, args.arguments, args.command), sort_keys=True))


if __name__ == "__main__":
    main()
