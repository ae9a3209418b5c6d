"""Content-Encoding, undone for what wiretap reads (recordings, agent cards); traffic passes as sent."""

from __future__ import annotations

import zlib

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}

INFLATED_LIMIT = 64 << 20
"""The most a decompressed copy may grow to: a gzip bomb costs the recorder this much, no more."""


class Decompressor:
    """Undoes a gzip or deflate Content-Encoding on the recorder's copy; the traffic stays as sent.

    Output stops at ``limit`` bytes (``truncated`` then says so): ``zlib``'s ``max_length`` keeps a
    small compressed chunk from inflating to gigabytes before anyone could look at its size.
    """

    def __init__(self, encoding: str | None, *, limit: int = INFLATED_LIMIT) -> None:
        wbits = _WBITS.get((encoding or "").strip().lower())
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self.identity = self._zlib is None
        """True when there is nothing this can undo: chunks pass through as they are."""
        self.failed = False
        self.truncated = False
        self._room = limit

    def __call__(self, chunk: bytes) -> bytes:
        if self._zlib is None or self.failed or self.truncated:
            return chunk if self._zlib is None else b""
        try:
            plain = self._zlib.decompress(chunk, self._room + 1)
        except zlib.error:
            self.failed = True
            return b""
        if len(plain) > self._room or self._zlib.unconsumed_tail:
            self.truncated = True
            plain = plain[: self._room]
        self._room -= len(plain)
        return plain


def decoded(body: bytes, encoding: str | None, *, limit: int = INFLATED_LIMIT) -> bytes | None:
    """A whole body without its Content-Encoding, or None if it cannot be undone (br, zstd, damage, too big)."""
    coding = (encoding or "identity").strip().lower()
    if coding == "identity":
        return body
    decompress = Decompressor(coding, limit=limit)
    if decompress.identity:
        return None
    plain = decompress(body)
    return None if decompress.failed or decompress.truncated else plain
