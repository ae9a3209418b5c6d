"""JSON documents as wiretap writes them for people and CI: indented by two, non-ASCII as is.

The stdlib writes an indented document through its Python encoder, which is slow and keeps every piece
of a big document before joining them; its C encoder writes the compact text, and msgspec indents that
text without reading the numbers again, so the bytes are the stdlib's own. A document the strict JSON
grammar refuses (NaN) takes the stdlib's way."""

from __future__ import annotations

import json

import msgspec


def indented(document: object) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, byte for byte."""
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        return msgspec.json.format(compact, indent=2)
    except msgspec.DecodeError:
        return json.dumps(document, indent=2, ensure_ascii=False)
