"""The real MCP Python SDK client against ``wiretap mcp``, for tests/e2e/test_mcp_real_clients.py.

Runs in the peer venv's python: ``mcp_sdk_wiretap_client.py MODE CALLS_JSON -- SERVER [ARGS...]``. It
connects over stdio, passing on its environment (``auto`` probes ``server/discover``, ``legacy`` sends
``initialize``), lists the tools, makes each call of CALLS_JSON (``[[tool, arguments], ...]``) and prints
what it got as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from pydantic import BaseModel


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run(mode: str, calls: list[list[Any]], command: list[str]) -> dict[str, Any]:
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(server, mode=mode) as client:
        return {
            "protocol_version": client.protocol_version,
            "tools": [dump(tool) for tool in (await client.list_tools()).tools],
            "calls": [dump(await client.call_tool(name, arguments)) for name, arguments in calls],
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["auto", "legacy"])
    parser.add_argument("calls")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.mode, json.loads(args.calls), args.command), sort_keys=True))


if __name__ == "__main__":
    main()
