"""An MCP Streamable HTTP client on the real MCP Python SDK 2.3.0, for tests/e2e/test_real_mcp_http.py.

Runs in the peer venv's python: ``mcp_sdk_http_client.py URL --mode auto|legacy --wire-log FILE``.
``mcp.Client`` connects with ``mode`` (``auto`` probes ``server/discover`` and stays on 2026-07-28
with a 2026 server; ``legacy`` sends ``initialize`` and keeps a session), uses tools, a resource and a
prompt, and prints what it got as one JSON object on stdout.

Its HTTP client's transport tees every exchange into ``--wire-log`` (``http_wire.TeeTransport``):
what the client itself put on the wire and read back, to compare a recording with.
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

import anyio
import httpx2
from http_wire import TeeTransport
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(url: str, mode: str, log: IO[str]) -> dict[str, Any]:
    progress: list[list[Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    timeout = httpx2.Timeout(30, read=60)
    async with httpx2.AsyncClient(transport=TeeTransport(log), timeout=timeout) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            info = client.server_info
            report: dict[str, Any] = {
                "protocol_version": client.protocol_version,
                "server_info": None if info is None else dump(info),
                "tools": [dump(tool) for tool in (await client.list_tools()).tools],
                "calls": {
                    "add": dump(await client.call_tool("add", {"a": 2, "b": 40})),
                    "echo": dump(await client.call_tool("echo", {"text": 'héllo ✓ "wire"\n\tend'})),
                    "count": dump(await client.call_tool("count", {"n": 3}, progress_callback=on_progress)),
                    "forecast": dump(await client.call_tool("forecast", {"region": "us-west1", "days": 3})),
                    "fail": dump(await client.call_tool("fail", {})),
                },
                "resource": dump(await client.read_resource("notes://café/menu")),
                "prompt": dump(await client.get_prompt("greet", {"name": "Ada"})),
            }
            report["progress"] = progress
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--wire-log", required=True)
    args = parser.parse_args()
    with open(args.wire_log, "w", encoding="utf-8") as log:
        report = anyio.run(run, args.url, args.mode, log)
    print(json.dumps(report, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main()
