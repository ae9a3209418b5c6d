"""Running a real client to its end, bounded: a process group of its own, its output kept, and on a
timeout the whole group killed and the output so far in the error."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path


def run_bounded(
    argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            name = Path(argv[0]).name
            raise TimeoutError(f"{name} did not finish in {timeout}s\nstdout:\n{stdout}\nstderr:\n{stderr}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
