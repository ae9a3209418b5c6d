"""A scripted A2A polling client with the documented schedule of a Claude Code mod that polls workers.

``python a2a_lab_poller.py URL [--scale S] [--text TEXT]`` reads the agent card at URL, sends TEXT with
``SendMessage`` (``returnImmediately``) over the card's JSON-RPC interface and polls the task with
``GetTask``: it waits 0.5, 1, 2 and 4 s, then 5 s every time, from the end of the previous poll (its
answer, or its timeout) to the next; a poll with no answer within 15 s counts failed (the client closes
its connection); six failures in a row and it drops the task. ``--scale`` multiplies every figure (0.1:
0.05 … 0.5 s steps, a 1.5 s timeout). Each poll is its own connection.

It prints one JSON object: its own log, on ``time.monotonic()``: when the task was created (the answer to
SendMessage), and for each poll when it was sent, when it ended, and how (answered with its state, or
timed out), and when it gave up (dropped the task), if it did.
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
from itertools import chain, repeat
from typing import Any
from urllib.parse import urlsplit

STEPS = (0.5, 1.0, 2.0, 4.0)
EVERY = 5.0
TIMEOUT = 15.0
DROP_AFTER = 6
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}


def call(url: str, method: str, path: str, body: Any, timeout: float) -> tuple[Any, float, float]:
    """One exchange on a new connection: (answer or None on timeout, sent at, ended at)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    conn.connect()
    sent = time.monotonic()
    try:
        conn.request(method, path, body=data, headers=headers)
        answer = json.loads(conn.getresponse().read())
    except TimeoutError:
        answer = None
    ended = time.monotonic()
    conn.close()
    return answer, sent, ended


def run(url: str, scale: float, text: str) -> dict[str, Any]:
    card, _, _ = call(url, "GET", "/.well-known/agent-card.json", None, 30)
    jsonrpc = next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC")
    path = urlsplit(jsonrpc).path
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    sent, _, created = call(
        jsonrpc, "POST", path, {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}, 30
    )
    task_id = sent["result"]["task"]["id"]
    polls: list[dict[str, Any]] = []
    failures, end, gave_up = 0, created, None
    for n, step in enumerate(chain(STEPS, repeat(EVERY)), start=2):
        time.sleep(max(0.0, end + step * scale - time.monotonic()))
        body = {"jsonrpc": "2.0", "id": n, "method": "GetTask", "params": {"id": task_id}}
        answer, asked, end = call(jsonrpc, "POST", path, body, TIMEOUT * scale)
        state = answer["result"]["status"]["state"] if answer and "result" in answer else None
        polls.append({"sent": asked, "ended": end, "outcome": "answered" if answer else "timed out", "state": state})
        failures = 0 if answer else failures + 1
        if failures == DROP_AFTER:
            gave_up = end
            break
        if state in TERMINAL:
            break
    return {"task": task_id, "created": created, "polls": polls, "gave_up": gave_up, "scale": scale}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--text", default="silent 1000")
    args = parser.parse_args()
    print(json.dumps(run(args.url, args.scale, args.text)), flush=True)


if __name__ == "__main__":
    main()
