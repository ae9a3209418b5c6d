"""The pre-check before redaction: whether any rule of ``wiretap.wire.secrets`` could match at all.

Most messages hold no secret; this says so cheaply (the rules' anchors, on text or on raw UTF-8 bytes,
with Hyperscan where it is installed), so that clean messages are recorded verbatim.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from wiretap.wire.secrets import ANCHORS, ESCAPED_ASCII, PIVOTED, PLAIN_ANCHORS


def may_hold_token(text: str) -> bool:
    """False when no rule can match ``text``: none of the rules' anchors occurs in it."""
    if ESCAPED_ASCII.search(text) is not None:
        return True
    lower = text.lower()
    return any(anchor in lower for anchor in PLAIN_ANCHORS) or any(
        pivot in lower and any(anchor in lower for anchor in group) for pivot, group in PIVOTED.items()
    )


# Characters outside ASCII whose lower case holds an ASCII letter ("\u0130" -> "i\u0307", "\u212a" -> "k"): a
# scan of raw bytes for ASCII anchors would miss what ``str.lower()`` turns into one.
FOLDS_TO_ASCII = ("\u0130", "\u212a")
_ANCHOR_BYTES = tuple(anchor.encode() for anchor in ANCHORS)
_PIVOTED_BYTES = {pivot.encode(): tuple(a.encode() for a in group) for pivot, group in PIVOTED.items()}
_PLAIN_BYTES = tuple(anchor.encode() for anchor in PLAIN_ANCHORS)
_FOLD_BYTES = tuple(char.encode() for char in FOLDS_TO_ASCII)
_ESCAPED_ASCII_BYTES = re.compile(ESCAPED_ASCII.pattern.encode())
PRECHECK_EXPRESSIONS = (
    *(re.escape(anchor) for anchor in _ANCHOR_BYTES),
    _ESCAPED_ASCII_BYTES.pattern,
    *(b"".join(b"\\x%02x" % byte for byte in char) for char in _FOLD_BYTES),
)
"""Every anchor (matched ASCII case-insensitively), JSON's ASCII escapes and the characters above."""
_LONGEST_MATCH = 64
"""More than any expression above can match (the longest anchor has 13 bytes, an escape 6)."""
_SCAN_WINDOW = 1 << 30
"""The most one Hyperscan call reads (it takes a 32-bit length): a longer buffer is read in windows."""


def _compile(hyperscan: Any) -> Any:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH
    database.compile(expressions=list(PRECHECK_EXPRESSIONS), flags=flags)
    return database


_BUILT_APART: bytes | None = None
"""A serialized database built in another process (``use_built_apart``), loaded instead of compiling one here."""


def serialized_database() -> bytes | None:
    """The pre-check's database, compiled and serialized (for a process that built it on another's behalf);
    None where Hyperscan is not installed."""
    try:
        import hyperscan
    except ImportError:
        return None
    return bytes(hyperscan.dumpb(_compile(hyperscan)))


def use_built_apart(serialized: bytes | None) -> None:
    """Load the database from ``serialized`` on first use rather than compile it in this process."""
    global _BUILT_APART
    _BUILT_APART = serialized
    _precheck.cache_clear()


@functools.cache
def _precheck() -> Any:
    """Hyperscan and its database of the expressions, built on first use unless it was built apart; None
    where Hyperscan is not installed."""
    try:
        import hyperscan
    except ImportError:  # a platform without its wheels: the scans below say the same, more slowly
        return None
    if _BUILT_APART is not None:
        try:
            return hyperscan, hyperscan.loadb(_BUILT_APART, hyperscan.HS_MODE_BLOCK)
        except hyperscan.error:  # (a serialized database this build cannot read)
            pass
    return hyperscan, _compile(hyperscan)


_SCRATCH = threading.local()
"""Hyperscan's scratch space, one per thread (a database's own must not be used by two threads at once)."""


def _stop(*_: Any) -> bool:
    return True  # the first match answers the question: stop the scan there


def may_hold_token_in(data: bytes | bytearray | memoryview) -> bool:
    """The pre-check over raw UTF-8 bytes, many messages at once: False only when ``may_hold_token`` is
    False for every piece of ``data`` (a line, or any slice of it). Hyperscan reads it once (SIMD); the
    fallback is the scans ``may_hold_token`` makes, on bytes."""
    precheck = _precheck()
    if precheck is None:
        return _may_hold_token_scan(bytes(data))
    hyperscan, database = precheck
    scratch = getattr(_SCRATCH, "scratch", None)
    if scratch is None:
        scratch = _SCRATCH.scratch = hyperscan.Scratch(database)
    try:
        if len(data) <= _SCAN_WINDOW:
            database.scan(data, match_event_handler=_stop, scratch=scratch)
            return False
        view = memoryview(data)
        # Windows overlap by more than a match's length, so that none is cut in two.
        for start in range(0, len(view) - _LONGEST_MATCH, _SCAN_WINDOW - _LONGEST_MATCH):
            database.scan(view[start : start + _SCAN_WINDOW], match_event_handler=_stop, scratch=scratch)
    except hyperscan.ScanTerminated:
        return True
    return False


def _may_hold_token_scan(data: bytes) -> bool:
    if _ESCAPED_ASCII_BYTES.search(data) is not None or any(char in data for char in _FOLD_BYTES):
        return True
    lower = data.lower()
    return any(anchor in lower for anchor in _PLAIN_BYTES) or any(
        pivot in lower and any(anchor in lower for anchor in group) for pivot, group in _PIVOTED_BYTES.items()
    )


def may_hold_token_fast(text: str) -> bool:
    if len(text) > 64:  # (long ones are mostly unique)
        return _may_hold_token_checked(text)
    return _may_hold_token_short(text)


def _may_hold_token_checked(text: str) -> bool:
    """``may_hold_token``, after the Hyperscan pre-check (one pass in C) has said a rule might match at all."""
    if _precheck() is not None:
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate
            return may_hold_token(text)
        if not may_hold_token_in(data):
            return False
    return may_hold_token(text)


_may_hold_token_short = functools.lru_cache(maxsize=4096)(_may_hold_token_checked)
"""Short strings repeat: JSON-RPC versions, method and tool names, enum values."""


def may_need_redaction(json_text: str) -> bool:
    """A cheap pre-check on serialized JSON (or any text), so that clean messages are recorded verbatim."""
    return may_hold_token_fast(json_text)
