"""Sans-IO framing: a byte stream in, complete frames out, whatever the chunking.

MCP's stdio transport is newline-delimited JSON, but a tap must not trust that: a frame is whatever
lies between two ``\\n`` bytes, of any length and any content. One that grows past the framer's
``limit`` (a line that never ends) is not held whole: it comes out as a ``Cut``, its first bytes and
its size.
"""

from __future__ import annotations

Frame = bytes | bytearray

UNLIMITED = 1 << 62
PREVIEW = 64 << 10
"""What a ``Cut`` keeps of its frame (and an SSE event over its decoder's limit, of its data)."""


class Cut(bytes):
    """A frame over the framer's limit: its first ``PREVIEW`` bytes; ``size`` is the whole frame's."""

    size: int


def _cut(head: Frame, size: int) -> Cut:
    cut = Cut(head[:PREVIEW])
    cut.size = size
    return cut


class LineFramer:
    """Splits a byte stream at ``\\n``; frames come out without their newline."""

    def __init__(self, limit: int = UNLIMITED) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._cut_size: int | None = None
        """While a frame over the limit goes on: its size so far (``_partial`` then holds its preview)."""
        self.cuts = 0
        """``Cut`` frames returned so far."""

    @property
    def pending(self) -> int:
        """Bytes seen since the last newline."""
        return len(self._partial) if self._cut_size is None else self._cut_size

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next chunk; return every frame it completes, in order."""
        if self._cut_size is not None or len(self._partial) + len(data) > self._limit:
            return self._feed_long(data)
        if b"\n" not in data:
            self._partial += data
            return []
        pieces: list[Frame] = list(data.split(b"\n"))
        if self._partial:
            self._partial += pieces[0]
            pieces[0] = self._partial
        self._partial = bytearray(pieces.pop())
        return pieces

    def _feed_long(self, data: bytes) -> list[Frame]:
        """``feed`` when a frame may be over the limit: each piece is measured before it is held."""
        pieces = data.split(b"\n")
        last = pieces.pop()
        frames: list[Frame] = []
        for at, piece in enumerate(pieces):
            if at == 0:  # the end of the frame under way
                self._grow(piece)
                frame = self._take()
            else:
                frame = _cut(piece, len(piece)) if len(piece) > self._limit else piece
                self.cuts += type(frame) is Cut
            frames.append(frame)
        self._grow(last)
        return frames

    def _grow(self, piece: bytes) -> None:
        """Add ``piece`` to the frame under way: held, or only counted once the frame is over the limit."""
        if self._cut_size is None and len(self._partial) + len(piece) <= self._limit:
            self._partial += piece
            return
        self._cut_size = (len(self._partial) if self._cut_size is None else self._cut_size) + len(piece)
        if len(self._partial) >= PREVIEW:
            del self._partial[PREVIEW:]
        else:
            self._partial += piece[: PREVIEW - len(self._partial)]

    def _take(self) -> Frame:
        """The frame under way, ended: whole, or a ``Cut``."""
        frame: Frame = self._partial
        if self._cut_size is not None:
            frame = _cut(self._partial, self._cut_size)
            self.cuts += 1
        self._partial, self._cut_size = bytearray(), None
        return frame

    def close(self) -> Frame | None:
        """End of stream: the last frame if it had no newline, else None."""
        if not self._partial and self._cut_size is None:
            return None
        return self._take()
