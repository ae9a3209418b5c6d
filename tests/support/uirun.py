"""Running ``wiretap ui`` as a user would (a separate process) and generating recordings for it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

WIRETAP = [sys.executable, "-m", "wiretap"]
HEADER = {
    "kind": "header",
    "format": 1,
    "wiretap": "0.1.0",
    "started": "2026-11-30T12:00:00.000Z",
    "clock": "monotonic seconds since started",
    "transport": "stdio",
    "name": "big",
    "argv": ["server"],
    "cwd": "/project",
    "pid": 1,
    "redacted": True,
    "monotonic_origin": 100.0,
}


@contextmanager
def ui(path: Path, *extra: str) -> Iterator[str]:
    """``wiretap ui PATH``; yields the URL it printed first."""
    proc = subprocess.Popen(
        [*WIRETAP, "ui", str(path), *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.poll() is not None else b"")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def exchange(n: int, t: float, error: bool = False) -> list[dict[str, Any]]:
    """A tasks/get request #n at ``t`` and its answer 2 ms later (an error when asked)."""
    request = {"t": round(t, 6), "kind": "message", "dir": "c2s"}
    request["msg"] = {"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"taskId": f"task-{n % 7}"}}
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": n}
    if error:
        answer["error"] = {"code": -32603, "message": "poll failed"}
    else:
        answer["result"] = {"taskId": f"task-{n % 7}", "status": "working"}
    return [request, {"t": round(t + 0.002, 6), "kind": "message", "dir": "s2c", "msg": answer}]


def write_recording(path: Path, exchanges: int, *, every_error: int = 0) -> Path:
    """A stdio recording of ``exchanges`` polls (2 messages each), every ``every_error``-th answered with an error."""
    with path.open("w") as f:
        f.write(json.dumps(HEADER) + "\n")
        for n in range(exchanges):
            for event in exchange(n, n * 0.01, error=bool(every_error) and n % every_error == 0):
                f.write(json.dumps(event, separators=(",", ":")) + "\n")
    return path
