"""Speaking newline-delimited JSON-RPC to a stdio process (a tapped server, a replay), as a client would."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from support import paths

SCENARIOS = paths.SCENARIOS
TASK_SERVER = [sys.executable, str(SCENARIOS / "replay_task_server.py")]
TASK_CLIENT = [sys.executable, str(SCENARIOS / "replay_task_client.py")]
WIRETAP = [sys.executable, "-m", "wiretap"]
TIMEOUT = 10.0


@dataclass
class Received:
    at: float
    """Seconds since the process started."""
    message: dict[str, Any]


@dataclass
class LineClient:
    command: list[str]
    proc: subprocess.Popen[bytes] = field(init=False)
    started: float = field(init=False)
    inbox: queue.Queue[Received | None] = field(default_factory=queue.Queue)
    seen: list[Received] = field(default_factory=list)
    """Everything received so far, in order."""
    stderr: bytes = b""

    def __post_init__(self) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._err: list[bytes] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=lambda e=self.proc.stderr: self._err.append(e.read()), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.inbox.put(Received(time.monotonic() - self.started, json.loads(line)))
        self.inbox.put(None)

    def now(self) -> float:
        return time.monotonic() - self.started

    def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()
        return self.now()

    def next(self, timeout: float = TIMEOUT) -> Received:
        item = self.inbox.get(timeout=timeout)
        assert item is not None, "the process closed its stdout"
        self.seen.append(item)
        return item

    def until(self, message_id: Any, timeout: float = TIMEOUT) -> Received:
        """Read until the response to ``message_id`` (what comes before it stays in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            item = self.next(max(0.01, deadline - time.monotonic()))
            if "method" not in item.message and item.message.get("id") == message_id:
                return item

    def call(self, message_id: Any, method: str, params: dict[str, Any] | None = None) -> Received:
        self.send({"id": message_id, "method": method, **({"params": params} if params is not None else {})})
        return self.until(message_id)

    def close(self, timeout: float = TIMEOUT) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        returncode = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self.stderr = b"".join(self._err)
        return returncode


def recorded_session(recording: Path, *, shout: bool = False) -> LineClient:
    """The scenario server through the real tap, driven through one session of every plain feature."""
    client = LineClient([*WIRETAP, "tap", "--out", str(recording), "--", *TASK_SERVER, *(["--shout"] if shout else [])])
    play_session(client)
    assert client.close() == 0
    return client


def play_session(client: LineClient, ids: list[Any] | None = None, token: Any = "p-4") -> dict[str, Received]:
    """discover, list (then the server's log line), echo, slow (with a progress token), ask (answered)."""
    ids = ids or [1, 2, 3, 4, 5]
    got = {"discover": client.call(ids[0], "server/discover", {})}
    got["list"] = client.call(ids[1], "tools/list", {})
    got["log"] = client.next()
    got["echo"] = client.call(ids[2], "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    got["slow"] = client.call(
        ids[3], "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": token}}
    )
    client.send({"id": ids[4], "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
    got["question"] = client.next()
    got["answered"] = Received(
        client.send({"id": "ask-1", "result": {"action": "accept", "content": {"ok": True}}}), {}
    )
    got["ask"] = client.until(ids[4])
    return got
