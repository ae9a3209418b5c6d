"""A scenario MCP client with known truth, installed as ``claude`` so that ``wiretap -- claude`` wraps it.

``claude --mcp-config FILE --strict-mcp-config [--interleave] [--wait-for PATH] [--exit N] [--skip-noise]``

It sends ``tools/list`` (id 1) then ``tools/call`` (id 2) to each stdio server of FILE and waits for each
answer before sending anything else, so the true order of all messages is known:
- by default one server after the other, in the file's order: each is started, asked, closed and waited
  for before the next starts (the last one only once PATH exists, with --wait-for);
- with --interleave, all are started first, then asked in turns: A #1, B #1, A #2, B #2.
With --skip-noise it reads past stdout lines that are not JSON-RPC (as a lenient client does); without,
such a line makes it fail. Exits N (default 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REQUESTS = ((1, "tools/list"), (2, "tools/call"))
SKIP_NOISE = "--skip-noise" in sys.argv


class Server:
    def __init__(self, entry: dict[str, Any]) -> None:
        command = [str(entry["command"]), *map(str, entry.get("args") or [])]
        env = {**os.environ, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def ask(self, request_id: int, method: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        while SKIP_NOISE and line and not line.lstrip().startswith(b"{"):
            line = self.proc.stdout.readline()
        assert json.loads(line)["id"] == request_id

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def main(argv: list[str]) -> int:
    entries = list(json.loads(Path(argv[argv.index("--mcp-config") + 1]).read_text())["mcpServers"].values())
    if "--interleave" in argv:
        servers = [Server(entry) for entry in entries]
        for request in REQUESTS:
            for server in servers:
                server.ask(*request)
        for server in servers:
            server.close()
    else:
        go = option(argv, "--wait-for")
        for n, entry in enumerate(entries):
            while go is not None and n == len(entries) - 1 and not os.path.exists(go):
                time.sleep(0.05)
            server = Server(entry)
            for request in REQUESTS:
                server.ask(*request)
            server.close()
    return int(option(argv, "--exit") or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
