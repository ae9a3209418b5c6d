"""A real peer script (tests/peer_scripts/) serving on a free loopback port for the length of a test."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from support import paths

PEER_SCRIPTS = paths.PEER_SCRIPTS


@contextlib.contextmanager
def serving(command: list[str], cwd: Path) -> Iterator[str]:
    """A server that prints its URL as its first line; stopped with SIGINT."""
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdout is not None
        try:
            url = proc.stdout.readline().strip()
            assert url, f"{command[1]} did not start"
            yield url
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate(timeout=15)
