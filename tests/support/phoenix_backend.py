"""Arize Phoenix (PEERS.md) as a real OTLP backend: started on free loopback ports, read back over its REST API."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.processes import serving

READY_SECONDS = 240


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Phoenix:
    url: str

    def spans(self, project: str) -> list[dict[str, Any]]:
        """Every span of ``project`` (the ``openinference.project.name`` resource attribute)."""
        spans: list[dict[str, Any]] = []
        cursor = ""
        while True:
            query = f"?limit=1000{'&cursor=' + cursor if cursor else ''}"
            try:
                with urllib.request.urlopen(f"{self.url}/v1/projects/{project}/spans{query}", timeout=30) as response:
                    page = json.load(response)
            except urllib.error.HTTPError as exc:
                if exc.code == 404:  # no span has arrived for the project yet
                    return []
                raise
            spans += page["data"]
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return spans

    def wait_for(self, project: str, count: int, seconds: float = 120) -> list[dict[str, Any]]:
        """The project's spans once ``count`` have arrived (Phoenix ingests asynchronously), or at the deadline."""
        deadline = time.monotonic() + seconds
        spans = self.spans(project)
        while len(spans) < count and time.monotonic() < deadline:
            time.sleep(0.5)
            spans = self.spans(project)
        time.sleep(1.0)  # and any that would come on top of those expected
        return self.spans(project)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def running_phoenix(command: Path, working_dir: Path) -> Iterator[Phoenix]:
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    url = f"http://127.0.0.1:{port}"
    argv = [str(command), "serve"]
    log_path = working_dir / "phoenix.log"
    with serving(
        argv, log_path=log_path, ready=lambda: _healthy(url), ready_seconds=READY_SECONDS, stop=signal.SIGINT, env=env
    ):
        yield Phoenix(url)
