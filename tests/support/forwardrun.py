"""Running ``wiretap proxy --forward`` as a user does: a process whose ``export`` lines are read up to ``# ready``."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from support.taprun import settled_read_all
from wiretap.recording.events import Event


@dataclass
class ForwardRun:
    env: dict[str, str]
    out: Path
    proc: subprocess.Popen[str]
    stderr: str = ""
    recordings: dict[str, list[Event]] = field(default_factory=dict)
    """Each recording's events by its upstream origin, once the run is over."""

    @property
    def url(self) -> str:
        return self.env["HTTPS_PROXY"]

    def events(self, origin: str) -> list[Event]:
        return self.recordings[origin]


@contextmanager
def running_forward(out: Path, *extra: str) -> Iterator[ForwardRun]:
    command = [sys.executable, "-m", "wiretap", "proxy", "--forward", "--out", f"{out}/", *extra]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    env: dict[str, str] = {}
    for line in proc.stdout:
        if line.strip() == "# ready":
            break
        words = shlex.split(line)
        assert words[0] == "export", line
        name, _, value = words[1].partition("=")
        env[name] = value
    else:
        proc.wait(10)
        raise RuntimeError(f"the forward proxy did not start: {proc.stderr.read()}")
    run = ForwardRun(env, out, proc)
    try:
        yield run
    finally:
        proc.send_signal(signal.SIGINT)
        run.stderr = proc.communicate(timeout=20)[1]
        if proc.returncode == 0 and out.is_dir():
            for path in sorted(out.glob("*.jsonl")):
                header, events, _ = settled_read_all(path)
                run.recordings[str(header.get("upstream"))] = events
