"""``--ui`` on ``wiretap -- CLIENT`` and ``wiretap proxy``: the view in its own process beside the session.

Its own process, so that serving pages never competes with relaying traffic; its own session, so that
the terminal's Ctrl-C goes to the client alone; and it dies with us (its stdin, a pipe only we hold,
ends when we do, on every OS; SIGTERM on the way out). Nothing runs between fork and exec.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import click

from wiretap.transports.signals import forwarded_signals_blocked

STOP_SECONDS = 5.0


def start_ui_beside(path: Path, announce: IO[str] = sys.stderr) -> str:
    """Serve the view of ``path`` (which may not exist yet) until we exit; print its URL, one line."""
    stack = contextlib.ExitStack()
    url = stack.enter_context(ui_beside(path, announce))
    atexit.register(stack.close)
    return url


@contextlib.contextmanager
def ui_beside(path: Path, announce: IO[str] = sys.stderr) -> Iterator[str]:
    """Serve the view of ``path`` (which may not exist yet) while the block runs; print its URL, one line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiretap", "ui", "--beside", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    url = proc.stdout.readline().strip()
    if not url:
        proc.wait(STOP_SECONDS)
        raise click.ClickException(f"wiretap ui did not start: {proc.stderr.read().strip()}")
    errors: list[str] = []
    with forwarded_signals_blocked():  # (ours are for the client: the main thread passes them on)
        threading.Thread(target=_drain, args=(proc.stderr, errors), daemon=True).start()
    print(f"wiretap ui: {url}", file=announce, flush=True)
    try:
        yield url
    finally:
        proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _drain(stream: IO[str], into: list[str]) -> None:
    """Keep the view's stderr flowing (a full pipe would stall it); remember its last lines."""
    for line in stream:
        into[:] = [*into[-20:], line]


def proxy_with_ui(upstream: str, out: Path | None, name: str | None) -> Path:
    """The file ``wiretap proxy`` will record to, decided up front so the view can wait for it; serve its view."""
    from urllib.parse import urlsplit

    from wiretap.recording.paths import recording_path, safe_name

    path = recording_path(out, name or safe_name(urlsplit(upstream).hostname or "upstream"), time.time())
    start_ui_beside(path)
    return path
