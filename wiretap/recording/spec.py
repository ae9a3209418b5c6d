"""How a relay asks the recorder process to read one of its streams (apart from ``streams``, which does
the reading: a relay imports this, not the parsers and the redactor)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from wiretap.recording.event_types import StreamBase


@dataclass(frozen=True)
class StreamSpec:
    """How the recorder should read a stream: ``line``, ``stderr``, ``body``, ``sse`` or ``websocket``."""

    framing: str
    base: Mapping[str, Any] = field(default_factory=dict)
    """The fields every event of the stream carries: a ``StreamBase``, but for ``stderr`` (none)."""
    encoding: str | None = None

    @property
    def stream_base(self) -> StreamBase:
        """``base`` as what a stream of messages reads it as (it came through the channel as JSON)."""
        return cast(StreamBase, self.base)

    def to_dict(self) -> dict[str, Any]:
        # (what asdict gives, without its deep copy: the dict is serialized at once)
        return {"framing": self.framing, "base": self.base, "encoding": self.encoding}
