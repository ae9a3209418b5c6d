"""A wiretap process the wrapper runs beside the client (a reverse or forward proxy), started the one way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from wiretap.transports.process import EXIT_WITH_STDIN


def start_sidecar(command: list[str], log: Path) -> subprocess.Popen[str]:
    """``python -m wiretap COMMAND…``, its stderr in ``log`` (0600), its stdout a text pipe for what it announces."""
    with os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600), "w") as log_file:
        # Its own session keeps the terminal's Ctrl-C away from it; its stdin, a pipe only we hold,
        # ends when we do, and then so does it (portable, and nothing runs between fork and exec).
        return subprocess.Popen(
            [sys.executable, "-m", "wiretap", *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
            start_new_session=True,
            env={**os.environ, EXIT_WITH_STDIN: "1"},
        )
