"""``wiretap demo``: a scripted client talks to the demo server through a real ``wiretap tap``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from wiretap.errors import BadInput
from wiretap.recording.paths import recording_path
from wiretap.render.console import printer_for
from wiretap.render.filters import RowFilter
from wiretap.render.show import show

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "wiretap-demo-client", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class DemoClient:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin and proc.stdout
        self._in: IO[bytes] = proc.stdin
        self._out: IO[bytes] = proc.stdout
        self._next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self._next_id,
            "method": method,
            "params": {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}},
        }
        self._in.write(json.dumps(message).encode() + b"\n")
        self._in.flush()
        while True:
            line = self._out.readline()
            if not line:
                raise EOFError(f"the server closed its output before answering {method}")
            reply = json.loads(line)
            if reply.get("id") == self._next_id:
                return dict(reply)

    def close(self) -> None:
        self._in.close()


def converse(client: DemoClient) -> None:
    client.request("server/discover")
    client.request("tools/list")
    client.request("tools/call", {"name": "echo", "arguments": {"text": "hello through the wire"}})
    client.request(
        "tools/call",
        {"name": "build_report", "arguments": {"pages": 3}, "_meta": {"progressToken": "report-1"}},
    )
    client.request("resources/list")
    client.close()


def run_demo(out: Path | None, stdout: IO[str] = sys.stdout) -> int:
    path = recording_path(out, "demo", time.time())
    if path.exists():
        raise BadInput(f"{path}: exists; choose another --out")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # a place the tap cannot record in fails here, named
    command = [
        sys.executable,
        "-m",
        "wiretap",
        "tap",
        "--out",
        str(path),
        "--name",
        "demo",
        "--",
        sys.executable,
        "-m",
        "wiretap.demo.server",
    ]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        converse(DemoClient(proc))
    finally:
        code = proc.wait(timeout=30)
    show(path, printer_for(stdout, as_json=False, color=None), stdout, RowFilter(), notes=sys.stderr)
    print(f"\nRecording: {path}\nRead it again with: wiretap show {path}", file=stdout)
    return code
