"""A scenario MCP stdio client that polls a task at a fixed rate, for tests/replay/test_replay_tasks.py.

``python replay_task_client.py --poll SECONDS --answer-after SECONDS -- SERVER [ARGS...]`` (standard
library only). It starts SERVER, discovers it, lists its tools, calls ``migrate`` as a task (declaring
the tasks extension) and polls ``tasks/get`` every ``--poll`` seconds, from the moment the task was
created. Once a poll shows ``input_required``, it answers with ``tasks/update`` (``inputResponses``) at
the first poll ``--answer-after`` seconds or more later. It stops at ``completed``, closes the
server's stdin, and prints one JSON object: every poll as [seconds since the task was created, status],
when it answered, the final result and the log lines the server sent.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import IO, Any

EXTENSION = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


class Client:
    def __init__(self, server: list[str]) -> None:
        self.proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[str] = self.proc.stdin
        self.stdout: IO[str] = self.proc.stdout
        self.next_id = 0
        self.logs: list[str] = []

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.stdin.flush()
        while True:
            message = json.loads(self.stdout.readline())
            if message.get("method") == "notifications/message":
                self.logs.append(message["params"]["data"])
            elif message.get("id") == self.next_id:
                return dict(message)

    def close(self) -> None:
        self.stdin.close()
        for line in self.stdout:  # what the server still says, until it closes its stdout
            message = json.loads(line)
            if message.get("method") == "notifications/message":
                self.logs.append(message["params"]["data"])
        self.proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll", type=float, required=True)
    parser.add_argument("--answer-after", type=float, required=True)
    parser.add_argument("server", nargs="+")
    args = parser.parse_args()
    client = Client(args.server)
    client.request("server/discover", {})
    client.request("tools/list", {})
    time.sleep(0.3)  # the server's unprompted log line comes in the meantime
    created = client.request("tools/call", {"name": "migrate", "arguments": {}, "_meta": EXTENSION})["result"]
    start = time.monotonic()
    polls: list[list[Any]] = []
    asked_at: float | None = None
    answered_at: float | None = None
    result: Any = None
    n = 0
    while True:
        n += 1
        time.sleep(max(0.0, start + n * args.poll - time.monotonic()))
        at = time.monotonic() - start
        task = client.request("tasks/get", {"taskId": created["taskId"]})["result"]
        polls.append([round(at, 4), task["status"]])
        if task["status"] == "completed":
            result = task["result"]
            break
        if task["status"] == "input_required" and asked_at is None:
            asked_at = at
        if asked_at is not None and answered_at is None and at >= asked_at + args.answer_after:
            answered_at = time.monotonic() - start
            answer = {"environment": {"action": "accept", "content": {"environment": "staging"}}}
            client.request("tasks/update", {"taskId": created["taskId"], "inputResponses": answer})
        if n > 400:
            break
    client.close()
    print(
        json.dumps(
            {
                "created": created["status"],
                "polls": polls,
                "answered_at": answered_at,
                "result": result,
                "logs": client.logs,
            }
        )
    )


if __name__ == "__main__":
    main()
