"""An MCP client on the real MCP Python SDK, for tests/e2e/test_real_mcp_sdk.py.

Runs in the peer venv's python, not the test python: ``mcp_sdk_client.py MODE -- SERVER [ARGS...]``.
It connects over stdio with ``mcp.Client(..., mode=MODE)`` (``auto`` probes ``server/discover``,
``legacy`` sends ``initialize``), lists the tools, calls them, and prints what it got as one JSON
object on stdout.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from pydantic import BaseModel


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(mode: str, command: list[str]) -> dict[str, Any]:
    progress: list[list[Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode=mode) as client:
        info = client.server_info
        report: dict[str, Any] = {
            "protocol_version": client.protocol_version,
            "server_info": None if info is None else dump(info),
            "tools": [dump(tool) for tool in (await client.list_tools()).tools],
        }
        report["calls"] = {
            "add": dump(await client.call_tool("add", {"a": 2, "b": 40})),
            "big_text": dump(await client.call_tool("big_text", {"lines": 2000})),
            "shout_to_stderr": dump(await client.call_tool("shout_to_stderr", {"text": "hello"})),
            "count": dump(await client.call_tool("count", {"n": 3}, progress_callback=on_progress)),
            "fail": dump(await client.call_tool("fail", {})),
        }
        report["progress"] = progress
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["auto", "legacy"])
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.mode, args.command), sort_keys=True))


if __name__ == "__main__":
    main()
