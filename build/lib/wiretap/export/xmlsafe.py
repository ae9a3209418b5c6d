"""Text that XML (and HTML) can hold: characters XML 1.0 forbids become visible stand-ins."""

from __future__ import annotations

import re

# C0 controls but tab, LF and CR; lone surrogates; U+FFFE and U+FFFF.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    return chr(0x2400 + ord(char)) if char < " " else "\ufffd"  # U+0001 shows as ␁


def xml_safe(text: str) -> str:
    return _FORBIDDEN.sub(_stand_in, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """Lone surrogates (a JSON ``"\\ud800"`` decodes to one) cannot be written as UTF-8: U+FFFD instead."""
    return _SURROGATE.sub("\ufffd", text)
