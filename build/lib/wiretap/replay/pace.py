"""How fast a replay runs: as recorded, as fast as possible, or the recorded time divided by a factor."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Pace:
    factor: float
    """Recorded seconds per live second: 1 as recorded, 2 twice as fast, infinity as fast as possible."""

    @classmethod
    def parse(cls, text: str) -> Pace:
        """``recorded``, ``fast``, or a factor such as ``2`` (twice as fast) or ``0.5`` (half as fast)."""
        if text == "recorded":
            return cls(1.0)
        if text == "fast":
            return cls(math.inf)
        try:
            factor = float(text)
        except ValueError:
            factor = math.nan
        if not factor > 0 or math.isinf(factor):
            raise ValueError(f"--pace must be recorded, fast or a positive factor, not {text!r}")
        return cls(factor)

    @property
    def fast(self) -> bool:
        return math.isinf(self.factor)

    def live(self, recorded_seconds: float) -> float:
        """How long a recorded wait lasts now."""
        return 0.0 if self.fast else max(0.0, recorded_seconds) / self.factor

    def recorded(self, live_seconds: float) -> float:
        """How much recorded time a live wait stands for (infinite when fast)."""
        return math.inf if self.fast else max(0.0, live_seconds) * self.factor

    def __str__(self) -> str:
        return "fast" if self.fast else "recorded" if self.factor == 1.0 else f"{self.factor:g}×"


RECORDED = Pace(1.0)
FAST = Pace(math.inf)
