"""Small recordings of known truth for the export tests, written the way wiretap writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

EXT_META: dict[str, Any] = {
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
}


class Recording:
    """Events with a running JSON-RPC id, as a client and server would exchange them."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._id = 0

    def send(self, t: float, direction: str, body: dict[str, Any]) -> None:
        self.events.append({"t": t, "kind": "message", "dir": direction, "msg": {"jsonrpc": "2.0", **body}})

    def call(
        self, t: float, method: str, params: dict[str, Any], answer_t: float, result: Any = None, **reply: Any
    ) -> None:
        self._id += 1
        self.send(t, "c2s", {"id": self._id, "method": method, "params": params})
        self.send(answer_t, "s2c", {"id": self._id, **(reply or {"result": result})})

    def lifecycle(self, t: float, kind: str, **fields: Any) -> None:
        self.events.append({"t": t, "kind": kind, **fields})

    def write(self, path: Path, *, transport: str = "stdio", name: str = "reports", **extra: Any) -> Path:
        header = Header(transport, name, ["reports-server"], started_epoch=1_795_000_000.0, extra=extra)
        with path.open("wb") as file:
            file.write(b"".join(encode_event(header.to_dict())))
            events = sorted(self.events, key=lambda e: e["t"])
            for event in events:
                file.write(b"".join(encode_event(event)))
            last = events[-1]["t"] if events else 0.0  # a finished recording ends with its end event
            file.write(
                b"".join(encode_event({"t": last, "kind": "end", "ended": "normal", "written": len(events) + 2}))
            )
        return path


def status(task_id: str, state: str, interval_ms: int = 3000, **more: Any) -> dict[str, Any]:
    return {"resultType": "complete", "taskId": task_id, "status": state, "pollIntervalMs": interval_ms, **more}


T1_POLLS = [3.32, 6.32, 8.80, 23.00]
T2_POLLS = [25.0, 26.0, 27.0, 28.0, 29.0, 30.0]


def claude_code_tasks(path: Path) -> Path:
    """A client like Claude Code: task T1 asks a question (open 8.80–20.00 s, no poll inside: the longest
    gap is 11.20 s), is answered and completes; task T2 is polled every second and still working when the
    client closes stdin at 31.50 s; the server exits at 31.60 s."""
    r = Recording()
    r.lifecycle(0.0, "spawn", argv=["reports-server"], pid=7)
    start = {"name": "build_report", "arguments": {}, "_meta": EXT_META}
    r.call(0.30, "tools/call", start, 0.32, {**status("T1", "working"), "resultType": "task"})
    for t in T1_POLLS[:2]:
        r.call(t, "tasks/get", {"taskId": "T1"}, t + 0.01, status("T1", "working"))
    r.call(8.80, "tasks/get", {"taskId": "T1"}, 8.80, status("T1", "input_required", inputRequests={"pages": {}}))
    r.call(20.0, "tasks/update", {"taskId": "T1", "inputResponses": {"pages": {"action": "accept"}}}, 20.001, {})
    r.call(23.0, "tasks/get", {"taskId": "T1"}, 23.01, status("T1", "completed", result={"content": []}))
    r.call(24.0, "tools/call", start, 24.1, {**status("T2", "working", 1000), "resultType": "task"})
    for t in T2_POLLS:
        r.call(t, "tasks/get", {"taskId": "T2"}, t + 0.01, status("T2", "working", 1000))
    r.lifecycle(31.5, "eof", dir="c2s")
    r.lifecycle(31.6, "exit", status=0, code=0)
    return r.write(path)


def relentless_poller(path: Path, polls: int = 20_000, every: float = 0.03) -> Path:
    """One task polled ``polls`` times, far more than there are pixels."""
    r = Recording()
    r.call(0.1, "tools/call", {"name": "x", "task": {}}, 0.2, {"task": {"taskId": "L", "status": "working"}})
    for n in range(polls):
        t = 0.3 + n * every
        state = "completed" if n == polls - 1 else "working"
        r.call(t, "tasks/get", {"taskId": "L"}, t + 0.005, {"taskId": "L", "status": state})
    r.lifecycle(0.3 + polls * every, "eof", dir="c2s")
    return r.write(path)
