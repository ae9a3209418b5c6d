"""mcp_tasks_client.py over Streamable HTTP: a 2025-11-25 task on the real MCP Python SDK 1.30.0.

For tests/e2e/test_lab_probe_real.py; runs in the mcp 1.30 venv's python:
``lab_mcp_tasks_http_client.py TOOL ARGS_JSON URL``. Same steps and output as mcp_tasks_client.py
(``call_tool_as_task``, ``poll_task``, ``get_task_result`` at ``input_required``, the elicitation
accepted with the schema's first choices), with ``streamablehttp_client`` instead of stdio.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext
from mcp_tasks_client import first_choice

warnings.simplefilter("ignore", DeprecationWarning)


async def run(tool: str, arguments: dict[str, Any], url: str) -> dict[str, Any]:
    report: dict[str, Any] = {"elicitations": [], "statuses": []}

    async def on_elicit(
        context: RequestContext[ClientSession, Any], params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        content = first_choice(getattr(params, "requestedSchema", {}) or {})
        report["elicitations"].append({"message": params.message, "answer": content})
        return types.ElicitResult(action="accept", content=content)

    async with (
        streamablehttp_client(url) as (read, write, _),
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
    parser.add_argument("url")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.tool, args.arguments, args.url), sort_keys=True))


if __name__ == "__main__":
    main()
