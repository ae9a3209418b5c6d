"""The real a2a-sdk agent (tests/peer_scripts/a2a_sdk_agent.py) served for a test,
its agent-card URLs per binding, and its events normalised for comparison."""

from __future__ import annotations

import json
import select
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from support import paths

PEER_SCRIPTS = paths.PEER_SCRIPTS

TIMEOUT = 60

BINDINGS = ["jsonrpc", "rest", "jsonrpc-0.3", "rest-0.3"]

ID_KEYS = {"id", "taskId", "contextId", "messageId", "artifactId"}


@dataclass
class Agent:
    url: str
    log: Path
    proc: subprocess.Popen[str]
    returncode: int | None = None
    stderr: str = ""

    def requests(self) -> list[dict[str, Any]]:
        """Every request the agent received, in order, with what it read and wrote."""
        merged: dict[int, dict[str, Any]] = {}
        for line in self.log.read_text().splitlines():
            entry = json.loads(line)
            merged.setdefault(entry["n"], {}).update(entry)
        return [merged[n] for n in sorted(merged)]


def first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline().strip() if ready else ""
    if not line:
        proc.kill()
        proc.communicate(timeout=10)
        raise RuntimeError("the a2a-sdk agent did not start")
    return line


@contextmanager
def running_agent(python: Path, root: Path, *flags: str) -> Iterator[Agent]:
    """Start the agent; on exit stop it with SIGTERM (uvicorn shuts down) and wait for it."""
    root.mkdir(parents=True, exist_ok=True)
    log = root / "agent-requests.jsonl"
    script = str(PEER_SCRIPTS / "a2a_sdk_agent.py")
    with (root / "agent.stderr").open("w") as stderr:
        proc = subprocess.Popen(
            [str(python), script, "--request-log", str(log), *flags],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=root,
        )
        try:
            agent = Agent(first_line(proc, timeout=30), log, proc)
            yield agent
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate(timeout=10)
    agent.returncode = proc.returncode
    agent.stderr = (root / "agent.stderr").read_text()


def normalized(value: Any, ids: dict[str, int] | None = None) -> Any:
    """``value`` with ids numbered by first appearance (so that links between them remain) and
    timestamps blanked."""
    ids = {} if ids is None else ids
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "timestamp":
                out[key] = "<time>"
            elif key in ID_KEYS and isinstance(item, str):
                out[key] = f"<id {ids.setdefault(item, len(ids))}>"
            else:
                out[key] = normalized(item, ids)
        return out
    if isinstance(value, list):
        return [normalized(item, ids) for item in value]
    return value


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def card_urls(card: dict[str, Any]) -> list[str]:
    urls = [card["url"]]
    for key in ("supportedInterfaces", "additionalInterfaces"):
        urls += [interface["url"] for interface in card.get(key, [])]
    return urls
