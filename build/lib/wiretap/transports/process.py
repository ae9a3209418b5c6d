"""Starting a server process in a group of its own, and passing its exit on like a shell."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
from collections.abc import Sequence

EXIT_WITH_STDIN = "WIRETAP_EXIT_WITH_STDIN"
"""Set to 1 in a proxy's environment: it stops when its stdin ends (its parent died), on every OS."""


def spawn(argv: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` with piped stdio in its own process group, so each signal reaches it once: ours."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        env=env,
        # Set up by subprocess itself between fork and exec (no Python runs there). If the tap is killed,
        # its recorder kills this group (see Recorder.guard_process_group): it works where prctl does not.
        process_group=0,
    )


def shell_status(returncode: int) -> int:
    """A child's return code as a shell reports it: 128 + N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"SIG{signum}"


def exit_like(returncode: int) -> None:
    """End this process the way the child ended: same code, or killed by the same signal."""
    if returncode < 0:
        signum = -returncode
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
            os.kill(os.getpid(), signum)
    os._exit(shell_status(returncode))
