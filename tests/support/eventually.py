"""The one way a test waits for something another process or thread does: a bounded ``eventually``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    condition: Callable[[], T], what: str, timeout: float = 30.0, describe: Callable[[], str] | None = None
) -> T:
    """``condition()``'s value once it is truthy. Fails naming ``what`` (and ``describe()``, e.g. a screen)
    after ``timeout`` s: a bound for a machine under load, never an assertion about speed."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s" + (f"\n{describe()}" if describe else ""))
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
