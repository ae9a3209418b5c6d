"""Running ``wiretap proxy`` as a user does: a separate process, its URL read from its first line."""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.taprun import settled_read_all
from wiretap.recording.events import Event


@dataclass
class ProxyRun:
    url: str
    recording: Path
    proc: subprocess.Popen[str]
    events: list[Event] = field(default_factory=list)
    stderr: str = ""

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["kind"] == kind]

    def messages(self, direction: str | None = None) -> list[Event]:
        return [e for e in self.of_kind("message") if direction is None or e["dir"] == direction]


@contextmanager
def running_proxy(upstream: str, recording: Path, *extra: str) -> Iterator[ProxyRun]:
    """Start the proxy; on exit stop it with SIGINT and read its recording into ``events``."""
    command = [
        sys.executable,
        "-m",
        "wiretap",
        "proxy",
        "--upstream",
        upstream,
        "--out",
        str(recording),
        *extra,
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    url = proc.stdout.readline().strip()
    if not url:
        proc.wait(10)
        raise RuntimeError(f"the proxy did not start: {proc.stderr.read()}")
    run = ProxyRun(url, recording, proc)
    try:
        yield run
    finally:
        proc.send_signal(signal.SIGINT)
        run.stderr = proc.communicate(timeout=20)[1]
        if proc.returncode == 0:
            _, run.events, _ = settled_read_all(recording)


def read_sse_until_gone(
    response: http.client.HTTPResponse, proc: subprocess.Popen[Any], kill_after: int, how: int = signal.SIGKILL
) -> bytes:
    got = bytearray()
    sent = False
    while True:
        try:
            chunk = response.read1(1 << 16)
        except (http.client.IncompleteRead, ConnectionError):
            break
        if not chunk:
            break
        got += chunk
        if not sent and got.count(b"\n\n") >= kill_after:
            proc.send_signal(how)
            sent = True
    return bytes(got)


def start_proxy(upstream: str, recording: Path, **kw: Any) -> tuple[subprocess.Popen[bytes], str]:
    """Start the proxy and read its URL; the caller ends it (a signal, a kill, its stdin)."""
    command = [sys.executable, "-m", "wiretap", "proxy", "--upstream", upstream, "--out", str(recording)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
    assert proc.stdout is not None
    with proc.stdout:
        url = proc.stdout.readline().decode().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return proc, url
