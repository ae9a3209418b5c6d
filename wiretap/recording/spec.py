"""How a relay asks the recorder process to read one of its streams (apart from ``streams``, which does
the reading: a relay imports this, not the parsers and the redactor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wiretap.recording.events import Event


@dataclass(frozen=True)
class StreamSpec:
    """How the recorder should read a stream: ``line``, ``stderr``, ``body``, ``sse`` or ``websocket``."""

    framing: str
    base: Event = field(default_factory=dict)
    encoding: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # (what asdict gives, without its deep copy: the dict is serialized at once)
        return {"framing": self.framing, "base": self.base, "encoding": self.encoding}
