"""Exit statuses, and the user errors that end a command with one line instead of a traceback.

Modules raise ``BadInput`` (or a subclass) for input wiretap cannot use, and let ``OSError`` through
for files, folders and ports it cannot use; ``user_error`` turns either into a message naming the file
or value at fault and its exit status. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    """All expectations hold, the recordings behave the same, the command did what was asked."""
    FAILED = 1
    """An expectation failed, the recordings differ, a strict replay had a miss."""
    USAGE = 2
    """A bad option or value, or a file that is not what the command needs (not a recording, bad YAML…)."""
    UNREADABLE = 3
    """A file or folder that cannot be read or written, or an address that cannot be listened on."""
    UNSUPPORTED = 4
    """The platform is not supported (Windows)."""
    INTERRUPTED = 130
    """Ctrl-C, as a shell reports it (128 + SIGINT)."""


class BadInput(ValueError):
    """Input wiretap cannot use; the message names the file or value."""

    status = ExitStatus.USAGE


class Unavailable(OSError):
    """A file, folder or port the command needs and cannot have; the message names it."""

    status = ExitStatus.UNREADABLE


def describe_os_error(exc: OSError) -> str:
    """``FILE: reason`` for an error about a file, else the reason."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, IsADirectoryError):
        reason = "is a folder, not a file"
    elif exc.errno == errno.ENOTDIR:
        reason = "a part of this path is a file, not a folder"
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' → '.join(names)}: {reason}" if names else reason


def user_error(exc: BaseException) -> tuple[str, ExitStatus] | None:
    """The one-line message and exit status for a user error; None for anything else."""
    if isinstance(exc, BadInput):
        return str(exc), exc.status
    if isinstance(exc, Unavailable):
        return str(exc), exc.status
    if isinstance(exc, IsADirectoryError) and exc.filename is not None:
        return describe_os_error(exc), ExitStatus.USAGE
    if isinstance(exc, OSError) and exc.filename is not None:
        return describe_os_error(exc), ExitStatus.UNREADABLE
    return None
