"""How the recorder process uses the C allocator (glibc): it keeps freed buffers of a few MiB for the
next line, and gives memory back when a huge line ends.

Each big line costs the recorder two buffers of its size (the line, and msgspec's copy of its text).
By default glibc maps such a buffer afresh and unmaps it when it is freed, so every page of every line
was faulted in and zeroed again: at 4 MiB lines that was most of the recorder's kernel time (~2,300
page faults a line). Kept in the heap, the pages are reused. What the heap may keep is bounded
(``RETAIN``), and it is handed back when a line of ``GIVE_BACK_AT`` or more has come, before its
text is copied, so that the peak for a huge line stays what it was (the line, its text, and the rest).

Elsewhere (macOS, another C library, ``WIRETAP_PORTABLE=1``) this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any

KEEP_UP_TO = 6 << 20
"""Buffers up to this size come from the heap and are reused (glibc's M_MMAP_THRESHOLD)."""
RETAIN = 16 << 20
"""Free memory the heap may keep (M_TRIM_THRESHOLD)."""
GIVE_BACK_AT = 16 << 20
"""A line this long is no buffer to keep: when one has come, what the heap holds free goes back."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


@functools.cache
def _glibc() -> Any:
    from wiretap.recording.recorder import portable  # (here: the recorder module imports the streams')

    if portable() or not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def keep_buffers() -> bool:
    """Let freed buffers up to ``KEEP_UP_TO`` be reused; True if the allocator took it."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, KEEP_UP_TO)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, RETAIN))


def give_back() -> None:
    """Hand the free memory the heap keeps back to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
