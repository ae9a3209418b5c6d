"""A scenario MCP client with known truth, installed as ``claude`` so that ``wiretap -- claude`` wraps it.

``claude --mcp-config FILE --strict-mcp-config [--exit N] [--wait-for PATH]``: starts the stdio servers
of FILE one after the other, in the file's order; to each it sends ``tools/list`` (id 1) and ``tools/call``
(id 2), reads both answers, closes its input and waits for it to exit; only then starts the next (the last
one only once PATH exists, with --wait-for). Exits N (default 0). So every message to a later server
comes after every message of an earlier one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def talk(entry: dict[str, Any]) -> None:
    command = [str(entry["command"]), *map(str, entry.get("args") or [])]
    env = {**os.environ, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert server.stdin is not None and server.stdout is not None
    for request_id, method in ((1, "tools/list"), (2, "tools/call")):
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode() + b"\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == request_id
    server.stdin.close()
    server.wait()


def main(argv: list[str]) -> int:
    config = json.loads(Path(argv[argv.index("--mcp-config") + 1]).read_text())
    entries = list(config["mcpServers"].values())
    for n, entry in enumerate(entries):
        if n == len(entries) - 1 and "--wait-for" in argv:
            while not os.path.exists(argv[argv.index("--wait-for") + 1]):
                time.sleep(0.05)
        talk(entry)
    return int(argv[argv.index("--exit") + 1]) if "--exit" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
