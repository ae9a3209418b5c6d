"""An MCP server over WebSocket (subprotocol ``mcp``, one JSON-RPC message a text frame) with one tool,
``add``: prints its URL (``ws://127.0.0.1:PORT/mcp``) as its first line of stdout, and writes every
message it receives and sends to ``--log`` as JSON lines, so a test knows what crossed its end.

    python ws_mcp_server.py --log FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import IO, Any

from aiohttp import WSMsgType, web

TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-06-18")
        result: Any = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ws", "version": "1"},
        }
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}}
    if method == "tools/call":
        args = message.get("params", {}).get("arguments", {})
        text = str(int(args.get("a", 0)) + int(args.get("b", 0)))
        return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}


def app(log: IO[str]) -> web.Application:
    async def mcp(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(protocols=("mcp",))
        await ws.prepare(request)
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            log.write(json.dumps({"dir": "in", "msg": message}) + "\n")
            reply = answer(message)
            if reply is not None:
                log.write(json.dumps({"dir": "out", "msg": reply}) + "\n")
                await ws.send_str(json.dumps(reply))
            log.flush()
        return ws

    application = web.Application()
    application.router.add_get("/mcp", mcp)
    return application


async def serve(log: IO[str]) -> None:
    runner = web.AppRunner(app(log))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    print(f"ws://127.0.0.1:{port}/mcp", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    with open(args.log, "a", encoding="utf-8") as log:
        asyncio.run(serve(log))
    sys.exit(0)


if __name__ == "__main__":
    main()
