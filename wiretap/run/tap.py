"""Putting a tap together: the recording file, the recorder, the stdio transport."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from wiretap.otel.live import expect_recording
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.recording.events import Header
from wiretap.recording.paths import default_name, recording_path
from wiretap.recording.recorder import Recorder
from wiretap.recording.writer import RecordingWriter, create_unique
from wiretap.run.finish import finish_recording, finish_signals
from wiretap.transports.stdio import SpawnFailed, StdioTap
from wiretap.wire.redact import redact_argv


def open_writer(wanted: Path, stderr: IO[str]) -> RecordingWriter:
    try:
        fd, path = create_unique(wanted)
    except OSError as exc:
        return RecordingWriter.unopenable(wanted, exc, stderr=stderr)
    if path != wanted:
        print(f"wiretap: {wanted} exists; recording to {path}", file=stderr, flush=True)
    return RecordingWriter(fd, path, stderr=stderr)


def tap(
    argv: Sequence[str],
    *,
    out: Path | None,
    name: str | None,
    redact: bool,
    stderr: IO[str] = sys.stderr,
    on_overload: str = "block",
    max_size: int = DEFAULT_MAX_SIZE,
) -> int:
    """Run ``argv`` through the stdio tap; return the server's raw return code (negative: signal).

    When the server ended on its own, returns once the recording is complete (``finish_recording``);
    when the tap passed a signal on, at once: the client is shutting it down, and the recorder
    completes the recording on its own."""
    started = time.time()
    shown_argv = redact_argv(list(argv)) if redact else list(argv)
    name = name or default_name(shown_argv)
    writer = open_writer(recording_path(out, name, started), stderr)
    if writer.opened:
        expect_recording(writer.path)  # (for the --otlp follower, if there is one)
    header = Header(transport="stdio", name=name, argv=shown_argv, redacted=redact)
    recorder = Recorder(writer, header, redact=redact, stderr=stderr, on_overload=on_overload, max_size=max_size)
    stdio = StdioTap(argv, recorder, shown_argv=shown_argv)
    finishing = finish_signals()
    try:
        return stdio.run()
    except SpawnFailed as failure:
        print(f"wiretap: {failure}", file=stderr, flush=True)
        return failure.status
    finally:
        ending = {"ended": "signal", "signals": stdio.signals} if stdio.signals else {"ended": "normal"}
        if stdio.signals:
            finishing.restore()
            recorder.close(wait=0.0, **ending)
        else:
            finish_recording(recorder, stderr, ending, finishing)
