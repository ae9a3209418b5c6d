"""A relay's last step: wait until its recorder has completed the recording, within a bound."""

from __future__ import annotations

import os
from typing import IO, Any

from wiretap.recording.recorder import Recorder
from wiretap.transports.signals import FORWARDED_SIGNALS, SignalPipe

COMPLETE_WITHIN = 5.0
"""Seconds wiretap waits at exit for its recorder to complete the recording (WIRETAP_COMPLETE_WITHIN_S)."""


def complete_within() -> float:
    try:
        return max(0.0, float(os.environ.get("WIRETAP_COMPLETE_WITHIN_S", COMPLETE_WITHIN)))
    except ValueError:
        return COMPLETE_WITHIN


def finish_signals() -> SignalPipe:
    """Catch the signals wiretap passes on, for the finish's wait. Installed before a relay's own catching,
    they are what the relay puts back when it ends, so a signal between the relay's end and the wait ends
    the wait instead of taking its default action on wiretap."""
    signals = SignalPipe(FORWARDED_SIGNALS, lambda _signum: None)
    signals.install()
    signals.watched = True  # (the handler leaves the byte on the pipe, which wakes the wait)
    return signals


def finish_recording(
    recorder: Recorder, stderr: IO[str], ending: dict[str, Any], caught: SignalPipe | None = None
) -> bool:
    """Close the recording and wait until it is complete, up to ``complete_within()``; say so on stderr
    when it is not. ``ending``: how the recording ended, for its end event; ``caught``: the
    ``finish_signals()`` caught since before the relay, if any.

    A signal wiretap would pass on ends the wait at once: whoever sends one is in a hurry to see wiretap
    go (the recorder completes the file on its own all the same)."""
    signals = caught or finish_signals()
    try:
        done = recorder.close(wait=complete_within(), unless=signals.fd, **ending)
    finally:
        signals.restore()
    if not done and recorder.writer.opened:
        print(
            f"wiretap: the recorder is still finishing {recorder.writer.path}; it completes on its own "
            "(wiretap's readers wait for it)",
            file=stderr,
            flush=True,
        )
    return done
