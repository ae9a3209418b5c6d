"""Starting a server process so that it cannot outlive the tap, and passing its exit on like a shell."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, signum: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A preexec_fn that has the kernel send ``signum`` to the child when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None

    def preexec() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


def spawn(argv: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` with piped stdio in its own process group, so each signal reaches it once: ours."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        env=env,
        process_group=0,
        # SIGKILL: if the tap was killed, its client is escalating already; the server goes with it.
        preexec_fn=die_with_parent(os.getpid()),
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
