"""What several commands share: recording options and a quiet end when the reader goes away."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click


def recording_out(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Path | None:
    """``--out DIR/`` names a folder even when it does not exist yet: create it (a failure is the recorder's to say)."""
    if value is None:
        return None
    if value.endswith(("/", os.sep)):
        with contextlib.suppress(OSError):
            Path(value).mkdir(parents=True, exist_ok=True, mode=0o700)
    return Path(value)


OVERLOAD_OPTION: tuple[tuple[str], dict[str, Any]] = (
    ("--on-overload",),
    {
        "type": click.Choice(["block", "drop"]),
        "default": "block",
        "show_default": True,
        "help": "When the recorder falls behind by its whole buffer: slow the traffic down (block), "
        "or keep its pace and record exact counts of what was not recorded (drop).",
    },
)


def _max_size(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    from wiretap.recording.cap import parse_size

    return parse_size(value)


MAX_SIZE_OPTION: tuple[tuple[str], dict[str, Any]] = (
    ("--max-size",),
    {
        "default": "1G",
        "show_default": True,
        "metavar": "SIZE",
        "callback": _max_size,
        "help": "Store at most SIZE per recording (each server's, in a session): 500K, 64M, 1G, bytes; "
        "unlimited or 0: no cap. Past it the traffic still passes whole; the recording counts what it does not store.",
    },
)


def quiet_broken_pipe() -> NoReturn:
    """The reader went away (``| head``): stop quietly, as other Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


def reading_a_whole_recording() -> None:
    """For a command that reads a recording through and exits: what is loaded so far (the imports) is
    left out of every collection, and young objects are collected in larger batches. A pass makes
    millions of short-lived objects and few cycles, while what it keeps grows: each collection that
    walks what it keeps costs more the longer the recording (``bench/report_scale.py``)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
