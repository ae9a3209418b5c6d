"""Running a real client to its end, bounded: a process group of its own, its output kept, and on a
timeout the whole group killed and the output so far in the error. And a backend (an OTLP or metrics
store) kept serving while a test runs: started, waited for until it answers, stopped after."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
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


@contextlib.contextmanager
def serving(
    argv: list[str],
    *,
    log_path: Path,
    ready: Callable[[], bool],
    ready_seconds: float,
    stop: signal.Signals = signal.SIGTERM,
    env: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``argv`` running, its output in ``log_path``, from when ``ready()`` holds until the block ends (then
    ``stop``, and SIGKILL if it has not ended 30 s later)."""
    name = Path(argv[0]).name
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, env=None if env is None else dict(env), stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + ready_seconds
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.2)
            yield proc
        finally:
            proc.send_signal(stop)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
