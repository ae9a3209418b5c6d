"""Sans-IO framing: a byte stream in, complete frames out, whatever the chunking.

MCP's stdio transport is newline-delimited JSON, but a tap must not trust that: a frame is whatever
lies between two ``\\n`` bytes, of any length and any content.
"""

from __future__ import annotations

Frame = bytes | bytearray


class LineFramer:
    """Splits a byte stream at ``\\n``; frames come out without their newline."""

    def __init__(self) -> None:
        self._partial = bytearray()

    @property
    def pending(self) -> int:
        """Bytes seen since the last newline."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next chunk; return every frame it completes, in order."""
        if b"\n" not in data:
            self._partial += data
            return []
        pieces: list[Frame] = list(data.split(b"\n"))
        if self._partial:
            self._partial += pieces[0]
            pieces[0] = self._partial
        self._partial = bytearray(pieces.pop())
        return pieces

    def close(self) -> Frame | None:
        """End of stream: the last frame if it had no newline, else None."""
        if not self._partial:
            return None
        rest, self._partial = self._partial, bytearray()
        return rest
