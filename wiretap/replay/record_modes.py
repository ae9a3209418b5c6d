"""pytest record modes, as pytest-recording has them: a test asks for a server (``wiretap_stdio(command)``
returns the argv to spawn, ``wiretap_http(url)`` the URL to use) and gets the real one through wiretap
while recording, or a replay of the test's recording otherwise.

- ``once`` (record when the recording is missing, else replay), ``none`` (replay only: a missing recording
  fails the test), ``all`` (always record, replacing it);
- ``new_episodes``: an MCP session is stateful, so a live server and a replayed one cannot take turns in it;
  the test runs against the real server, and its recording is replaced only when that run asked
  something the recording lacked (the known part is then recorded again with it).

A recording lives at ``<test dir>/recordings/<module>/<test>[-<name>].jsonl`` (``wiretap_recordings_dir``
ini option; ``@pytest.mark.wiretap(recording=PATH)`` for one test). A replay that could not answer a
request fails the test itself, naming the closest recorded request and what differed. With
``@pytest.mark.wiretap(expect="file.yaml")`` the client's traffic of the run (recorded through wiretap in
every mode) is checked against behaviour expectations after the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.recording.complete import await_end

WIRETAP = [sys.executable, "-m", "wiretap"]
MODES = ("once", "new_episodes", "none", "all")
DEFAULT_MODE = "none"
DEFAULT_DIR = "recordings"
SUMMARY_WAIT = 10.0
"""How long a stdio replay may take to end after the test (its client has usually closed it already)."""
KEEP_WAIT = 60.0
"""How long a recording made during the test may take to be complete (its recorder finishing a backlog)."""


class NoRecording(Exception):
    """Record mode ``none`` and the recording is missing, or a recording to replay is not complete."""


def recording_name(module: str, test: str, name: str | None) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", test).strip("-")
    return f"{module}/{safe}{'-' + name if name else ''}.jsonl"


@dataclass
class Use:
    """One server a test asked for."""

    recording: Path
    recording_mode: bool
    """Whether the real server runs (through wiretap); else a replay answers."""
    live: Path
    """What the client did in this run, recorded through wiretap (what expectations are checked on)."""
    summary: Path | None = None
    proc: subprocess.Popen[str] | None = None


@dataclass
class Wiretap:
    """The per-test state behind the ``wiretap_stdio`` and ``wiretap_http`` fixtures."""

    mode: str
    base: Path
    """The recordings folder (``<test dir>/recordings``)."""
    module: str
    test: str
    scratch: Path
    explicit: Path | None = None
    uses: list[Use] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._procs: list[subprocess.Popen[str]] = []

    def path(self, name: str | None) -> Path:
        if self.explicit is not None:
            return self.explicit if name is None else self.explicit.with_name(f"{self.explicit.stem}-{name}.jsonl")
        return self.base / recording_name(self.module, self.test, name)

    def _use(self, name: str | None) -> Use:
        recording = self.path(name)
        exists = recording.is_file()
        if self.mode == "none" and not exists:
            raise NoRecording(
                f"no recording at {recording} (record mode none); record it with --wiretap-record-mode=once"
            )
        recording_mode = self.mode in ("all", "new_episodes") or (self.mode == "once" and not exists)
        if not recording_mode:
            completion = await_end(recording)
            if not completion.complete:
                raise NoRecording(f"{recording} {completion.summary}; record it again with --wiretap-record-mode=all")
        live = self.scratch / f"live-{len(self.uses)}.jsonl"
        use = Use(recording, recording_mode, live)
        self.uses.append(use)
        return use

    def stdio(self, command: Sequence[str], *, name: str | None = None) -> list[str]:
        use = self._use(name)
        if use.recording_mode:
            return [*WIRETAP, "tap", "--out", str(use.live), "--", *command]
        use.summary = use.live.with_suffix(".summary.json")
        replay = [*WIRETAP, "replay", str(use.recording), "--pace", "fast", "--summary", str(use.summary)]
        return [*WIRETAP, "tap", "--out", str(use.live), "--", *replay]

    def http(self, url: str, *, name: str | None = None) -> str:
        use = self._use(name)
        upstream = url
        if not use.recording_mode:
            use.summary = use.live.with_suffix(".summary.json")
            replay = [*WIRETAP, "replay", str(use.recording), "--pace", "fast", "--summary", str(use.summary)]
            use.proc = _serving([*replay, "--listen", "127.0.0.1:0"])
            upstream = _first_line(use.proc)
        proxy = _serving([*WIRETAP, "proxy", "--upstream", upstream, "--out", str(use.live)])
        self._procs.append(proxy)
        return _first_line(proxy)

    # -- after the test -------------------------------------------------------------------------------

    def finish(self) -> list[str]:
        """Stop what runs, keep what was recorded; the replay misses, one paragraph each."""
        for proc in self._procs:
            _stop(proc)
        problems = []
        for use in self.uses:
            if use.proc is not None:
                _stop(use.proc)
            if use.recording_mode:
                problems += self._keep(use)
            elif use.summary is not None:
                problems += _misses(use)
        return problems

    def _keep(self, use: Use) -> list[str]:
        """Keep what the test recorded, once it is complete; else say why it was not kept."""
        if not use.live.is_file():
            return []
        completion = await_end(use.live, KEEP_WAIT, patient=True)
        if not completion.complete:
            return [f"{use.recording} was not recorded: this run's recording {completion.summary}"]
        if self.mode == "new_episodes" and use.recording.is_file() and not _asked_new(use.recording, use.live):
            return []
        use.recording.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staged = use.recording.with_name(f".{use.recording.name}.tmp")
        shutil.copyfile(use.live, staged)
        os.chmod(staged, 0o600)
        os.replace(staged, use.recording)
        return []

    def close(self) -> None:
        for proc in self._procs:
            _stop(proc)
        for use in self.uses:
            if use.proc is not None:
                _stop(use.proc)
        shutil.rmtree(self.scratch, ignore_errors=True)


def _serving(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        _, stderr = proc.communicate(timeout=10)
        raise RuntimeError(f"wiretap did not start: {stderr.strip()[-500:]}")
    return line


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=15)


def _misses(use: Use) -> list[str]:
    assert use.summary is not None
    deadline = time.monotonic() + SUMMARY_WAIT
    while not use.summary.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        summary: dict[str, Any] = json.loads(use.summary.read_text())
    except (OSError, ValueError):
        return []  # the replay never ran (the test did not start the server)
    out = []
    for miss in summary.get("misses", []):
        params = json.dumps(miss.get("params"), ensure_ascii=False)[:120]
        closest = miss.get("closest")
        near = (
            "the recording holds no request"
            if closest is None
            else f"closest is #{closest['number']} {closest['method']} "
            f"{json.dumps(closest.get('params'), ensure_ascii=False)[:120]}; differed: {'; '.join(miss['differed'])}"
        )
        out.append(f"{miss['method']} {params} is not in {use.recording.name}: {near}")
    return out


def _asked_new(recording: Path, live: Path) -> bool:
    """Whether the live run sent a request the recording holds no match for."""
    from wiretap.replay.index import Index
    from wiretap.replay.loader import load_script

    known = Index(load_script(recording).exchanges, ("method", "params"))
    return any(known.find(e.request) is None for e in load_script(live).exchanges)


def scratch_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="wiretap-test-"))
