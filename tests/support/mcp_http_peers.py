"""Real MCP Streamable HTTP servers on Node (the TS SDK, behind the loopback preload) served for a test."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from support import paths

PEER_SCRIPTS = paths.PEER_SCRIPTS

PRELOAD = PEER_SCRIPTS / "loopback_preload.cjs"


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGINT, as a user's Ctrl-C; SIGKILL for the whole process group if that is not enough."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    with contextlib.suppress(ProcessLookupError):  # anything it left behind in its group
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.stdout is not None:
        proc.stdout.close()


@contextlib.contextmanager
def serving(argv: list[str], stderr: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A server process in its own process group, stopped (and its group killed) on exit."""
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        stop(proc)
