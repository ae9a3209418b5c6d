"""An MCP client on the real MCP Python SDK 2.3.0 over the old HTTP+SSE transport (2024-11-05).

For tests/e2e/test_real_mcp_http.py; runs in the SDK venv's python:
``mcp_sdk_sse_client.py SSE_URL --wire-log FILE``. ``sse_client`` GETs the SSE endpoint, waits for
the ``endpoint`` event, resolves its URL against SSE_URL (refusing one on another origin) and POSTs
every message there. The client then uses the reference "everything" server's ``echo``, ``get-sum``
and ``trigger-long-running-operation`` tools, and prints what it got as one JSON object on stdout.
Its HTTP client tees every exchange into ``--wire-log`` (``http_wire.TeeTransport``).
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

import anyio
import httpx2
from http_wire import TeeTransport
from mcp import Client
from mcp.client.sse import sse_client
from pydantic import BaseModel


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(url: str, log: IO[str]) -> dict[str, Any]:
    progress: list[list[Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    def http_client(**kwargs: Any) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=TeeTransport(log), **kwargs)

    async with Client(sse_client(url, httpx_client_factory=http_client), mode="legacy", cache=None) as client:
        info = client.server_info
        operation = {"duration": 0.3, "steps": 3}
        return {
            "protocol_version": client.protocol_version,
            "server_info": None if info is None else dump(info),
            "tools": sorted(tool.name for tool in (await client.list_tools()).tools),
            "calls": {
                "echo": dump(await client.call_tool("echo", {"message": 'héllo ✓ "sse"'})),
                "get-sum": dump(await client.call_tool("get-sum", {"a": 2, "b": 40})),
                "trigger-long-running-operation": dump(
                    await client.call_tool("trigger-long-running-operation", operation, progress_callback=on_progress)
                ),
            },
            "progress": progress,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--wire-log", required=True)
    args = parser.parse_args()
    with open(args.wire_log, "w", encoding="utf-8") as log:
        report = anyio.run(run, args.url, log)
    print(json.dumps(report, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main()
