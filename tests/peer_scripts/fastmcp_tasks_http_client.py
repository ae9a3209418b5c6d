"""A fastmcp 4.1.4 client calling tools as 2026-07-28 tasks (fastmcp-tasks) over Streamable HTTP.

For tests/e2e/test_real_mcp_http.py; runs in the fastmcp-tasks venv's python:
``fastmcp_tasks_http_client.py URL --wire-log FILE``. It calls ``slow_sum`` and ``slow_fail`` with
``call_tool_task`` (the server answers ``resultType: "task"`` at once), drives each handle to its
end (``ToolTask.result()`` polls ``tasks/get``), and prints one JSON object on stdout: the create
results (less ids and times) and the final results. Its HTTP client tees every exchange into
``--wire-log`` (``http_wire.TeeTransport``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import IO, Any

import httpx2
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp_tasks import call_tool_task
from http_wire import TeeTransport

VARYING = {"taskId", "createdAt", "lastUpdatedAt"}


def steady(create: Any) -> dict[str, Any]:
    """The create result without what differs from run to run."""
    dumped = create.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {k: v for k, v in dumped.items() if k not in VARYING}


def final(result: Any) -> dict[str, Any]:
    return {
        "content": [block.model_dump(mode="json", exclude_none=True) for block in result.content],
        "structured_content": result.structured_content,
        "is_error": result.is_error,
    }


async def run(url: str, log: IO[str]) -> dict[str, Any]:
    def http_client(**kwargs: Any) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=TeeTransport(log), **kwargs)

    transport = StreamableHttpTransport(url, httpx_client_factory=http_client)
    async with Client(transport, timeout=30) as client:
        summing = await call_tool_task(client, "slow_sum", {"a": 2, "b": 40, "seconds": 0.8})
        failing = await call_tool_task(client, "slow_fail", {"seconds": 0.3}, raise_on_error=False)
        return {
            "created": {"slow_sum": steady(summing.create_result), "slow_fail": steady(failing.create_result)},
            "results": {"slow_sum": final(await summing.result()), "slow_fail": final(await failing.result())},
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--wire-log", required=True)
    args = parser.parse_args()
    with open(args.wire_log, "w", encoding="utf-8") as log:
        report = asyncio.run(run(args.url, log))
    print(json.dumps(report, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main()
