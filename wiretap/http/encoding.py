"""Content-Encoding, undone for what wiretap reads (recordings, agent cards); traffic passes as sent."""

from __future__ import annotations

import zlib

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class Decompressor:
    """Undoes a gzip or deflate Content-Encoding on the recorder's copy; the traffic stays as sent."""

    def __init__(self, encoding: str | None) -> None:
        wbits = _WBITS.get((encoding or "").strip().lower())
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self.identity = self._zlib is None
        """True when there is nothing this can undo: chunks pass through as they are."""
        self.failed = False

    def __call__(self, chunk: bytes) -> bytes:
        if self._zlib is None or self.failed:
            return chunk
        try:
            return self._zlib.decompress(chunk)
        except zlib.error:
            self.failed = True
            return b""


def decoded(body: bytes, encoding: str | None) -> bytes | None:
    """A whole body without its Content-Encoding, or None if it cannot be undone (br, zstd, damage)."""
    coding = (encoding or "identity").strip().lower()
    if coding == "identity":
        return body
    decompress = Decompressor(coding)
    if decompress.identity:
        return None
    plain = decompress(body)
    return None if decompress.failed else plain
