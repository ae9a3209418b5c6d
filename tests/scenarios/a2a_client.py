"""Scenario A2A 1.0 clients with known timing, run through the real ``wiretap proxy``.

``python a2a_client.py SCENARIO RECORDING`` starts the scenario agent (a2a_agent.py) and ``wiretap
proxy --upstream AGENT --out RECORDING``, reads the agent card through the proxy (four times: the
last three fetches anchor the schedule to the recording's clock), talks to the interface the rewritten card names,
on one keep-alive connection with ``A2A-Version: 1.0``, closes it, stops the proxy with SIGINT and the
agent with SIGTERM, and prints one JSON line (scenario, shift, lateness, and the windows in which each
time below really happened; see scenario_clock.py).

All times are recording seconds; every request waits for its answer.

a2a-backoff        JSON-RPC. SendMessage (returnImmediately) at 0.30; GetTask 0.5, 1, 2 and 4 s after the
                   previous request, then every 5 s: 0.80, 1.80, 3.80, 7.80, 12.80, 17.80, 22.80, 27.80,
                   32.80, 37.80, 42.80 (the last one COMPLETED); connection closed at 43.00.
a2a-rejected-loop  HTTP+JSON. POST message:send at 0.30; GET /tasks/{id} at 0.80 -> TASK_STATE_REJECTED,
                   then 8 more polls of the rejected task at 1.30, 1.80, ... 4.80; closed at 5.00.
a2a-unspecified    JSON-RPC. SendMessage at 0.30; GetTask at 0.80 (TASK_STATE_UNSPECIFIED) and 1.30
                   (COMPLETED); closed at 1.50.
a2a-03-in-10       JSON-RPC with A2A-Version 1.0, answered with 0.3 names: SendMessage at 0.30
                   ("submitted"), GetTask at 0.80 ("working") and 1.30 ("completed"); closed at 1.50.
a2a-terminal       JSON-RPC. SendMessage at 0.30; GetTask at 0.80 (COMPLETED); SendMessage to that task at
                   1.30 (-32004); CancelTask at 1.80 (-32002); closed at 2.00.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scenario_clock import RecordingClock

HERE = Path(__file__).resolve().parent
CARD = "/.well-known/agent-card.json"


class A2AClient:
    def __init__(self, scenario: str, recording: Path, proxy_url: str) -> None:
        self.scenario = scenario
        self.clock = RecordingClock(recording)
        parts = urlsplit(proxy_url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        self.next_id = 0
        self.messages = 0
        self.jsonrpc_path = self.rest_path = ""
        self.received = 0.0

    def http(self, method: str, path: str, body: Any = None, at: float | None = None) -> tuple[int, Any, float]:
        """One exchange (at ``at``: then marked from the send to the answer); returns status, body, send time."""
        if at is not None:
            self.clock.at(at)
        headers = {"A2A-Version": "1.0", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        sent = time.monotonic()
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        payload = response.read()
        self.received = time.monotonic()
        if at is not None:
            self.clock.mark(at, sent, self.received)
        return response.status, json.loads(payload) if payload else None, sent

    def rpc(self, method: str, params: dict[str, Any], at: float) -> dict[str, Any]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return dict(self.http("POST", self.jsonrpc_path, body, at)[1])

    def message(self, text: str, task_id: str | None = None) -> dict[str, Any]:
        self.messages += 1
        message: dict[str, Any] = {"messageId": f"msg-{self.messages}", "role": "ROLE_USER", "parts": [{"text": text}]}
        if task_id:
            message["taskId"] = task_id
        return {"message": message, "configuration": {"returnImmediately": True}}

    def start(self, first: float) -> None:
        self.http("GET", CARD)
        for nth in (2, 3, 4):
            _, card, sent = self.http("GET", CARD)
            self.clock.anchor(
                sent, lambda e: e.get("kind") == "http_request" and e.get("path") == CARD, nth, self.received
            )
        for interface in card["supportedInterfaces"]:
            path = urlsplit(interface["url"]).path
            if interface["protocolBinding"] == "JSONRPC":
                self.jsonrpc_path = path
            else:
                self.rest_path = path
        self.clock.begin(first)

    def close(self, at: float) -> None:
        self.clock.at(at)
        closed = time.monotonic()
        self.conn.close()
        ended = self.clock.seen(lambda e: e.get("kind") == "connection" and e.get("state") == "closed")
        self.clock.mark(at, closed, ended)


def backoff(c: A2AClient) -> None:
    c.start(0.30)
    task = c.rpc("SendMessage", c.message("Find me a flight to Lisbon on Friday."), 0.30)["result"]["task"]
    t = 0.30
    for wait in (0.5, 1, 2, 4, 5, 5, 5, 5, 5, 5, 5):
        t = round(t + wait, 2)
        state = c.rpc("GetTask", {"id": task["id"]}, t)["result"]["status"]["state"]
    assert state == "TASK_STATE_COMPLETED", state
    c.close(43.00)


def rejected_loop(c: A2AClient) -> None:
    c.start(0.30)
    _, sent, _ = c.http("POST", f"{c.rest_path}/message:send", c.message("Write my thesis."), 0.30)
    task_id = sent["task"]["id"]
    for n in range(9):
        _, task, _ = c.http("GET", f"{c.rest_path}/tasks/{task_id}", at=round(0.80 + 0.5 * n, 2))
        assert task["status"]["state"] == "TASK_STATE_REJECTED"
    c.close(5.00)


def two_polls(c: A2AClient) -> None:
    c.start(0.30)
    task = c.rpc("SendMessage", c.message("Find me a flight to Oslo."), 0.30)["result"]["task"]
    for t in (0.80, 1.30):
        c.rpc("GetTask", {"id": task["id"]}, t)
    c.close(1.50)


def terminal(c: A2AClient) -> None:
    c.start(0.30)
    task = c.rpc("SendMessage", c.message("Find me a flight to Rome."), 0.30)["result"]["task"]
    assert c.rpc("GetTask", {"id": task["id"]}, 0.80)["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert c.rpc("SendMessage", c.message("Make it business class.", task["id"]), 1.30)["error"]["code"] == -32004
    assert c.rpc("CancelTask", {"id": task["id"]}, 1.80)["error"]["code"] == -32002
    c.close(2.00)


SCENARIOS = {
    "a2a-backoff": backoff,
    "a2a-rejected-loop": rejected_loop,
    "a2a-unspecified": two_polls,
    "a2a-03-in-10": two_polls,
    "a2a-terminal": terminal,
}


def main(scenario: str, recording: Path) -> None:
    agent = subprocess.Popen([sys.executable, str(HERE / "a2a_agent.py"), scenario], stdout=subprocess.PIPE, text=True)
    proxy: subprocess.Popen[str] | None = None
    try:
        assert agent.stdout is not None
        upstream = agent.stdout.readline().strip()
        proxy = subprocess.Popen(
            [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream, "--out", str(recording)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proxy.stdout is not None
        client = A2AClient(scenario, recording, proxy.stdout.readline().strip())
        SCENARIOS[scenario](client)
        # The proxy records the connection's end as soon as it sees it; wait for that before stopping.
        client.clock.find(lambda e: e.get("kind") == "connection" and e.get("state") == "closed")
    finally:
        if proxy is not None:
            proxy.send_signal(signal.SIGINT)
            proxy.wait(20)
        agent.terminate()
        agent.wait(20)
    print(json.dumps(client.clock.summary(scenario, returncode=proxy.returncode)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
