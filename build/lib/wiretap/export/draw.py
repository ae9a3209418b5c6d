"""Drawing primitives for the SVG timeline: the page's geometry and colours, the time scale, element
building with escaping by construction (xml.etree), and label placement that never overlaps."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

SVG_NS = "http://www.w3.org/2000/svg"
WIDTH = 800
LEFT = 176
RIGHT = 24
PLOT = WIDTH - LEFT - RIGHT
LANES_TOP = 100
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"

INK, MUTED, GRID = "#0f172a", "#64748b", "#e2e8f0"
POLL, C2S, S2C, ERROR = "#1e3a8a", "#1d4ed8", "#0f766e", "#dc2626"
QUESTION_FILL, QUESTION_EDGE, GAP = "#fbbf24", "#d97706", "#92400e"
STATE_COLOURS = {
    "submitted": "#a5b4fc",
    "working": "#60a5fa",
    "input_required": "#f59e0b",
    "auth_required": "#f59e0b",
    "completed": "#16a34a",
    "failed": "#dc2626",
    "rejected": "#dc2626",
    "cancelled": "#6b7280",
    "unknown": "#a855f7",
}
BEFORE_STATE = "#cbd5e1"
MARK_COLOURS = {"cancel": ERROR, "answer": "#15803d", "finding": ERROR}
TICK_COLOURS = {"poll": POLL, "c2s": C2S, "s2c": S2C, "error": ERROR}


_NARROW = frozenset("iIl.,:;'|!()[] ")
_WIDE = frozenset("MWmw@%")


def text_width(text: str, size: float) -> float:
    """A generous estimate of rendered width for a sans-serif face: capitals and digits count wide, so
    that labels placed apart never touch."""
    units = 0.0
    for ch in text:
        if ch in _NARROW:
            units += 0.34
        elif ch in _WIDE:
            units += 0.9
        elif ch.isupper() or ch == "_":
            units += 0.7
        else:
            units += 0.58
    return units * size


def fit(text: str, size: float, width: float) -> str:
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def wrap(text: str, size: float, width: float) -> list[str]:
    """Lines no wider than ``width``, broken between words (after ", " or a space), or inside an
    UPPER_SNAKE name after an underscore; never elsewhere inside a word."""
    words = re_split(text)
    lines: list[str] = []
    line = ""
    for word in words:
        candidate = line + word
        if line and text_width(candidate.rstrip(), size) > width:
            lines.append(line.rstrip())
            line = word.lstrip()
        else:
            line = candidate
    if line.strip():
        lines.append(line.rstrip())
    return lines


def re_split(text: str) -> list[str]:
    """Pieces to wrap between: words with their trailing space, UPPER_SNAKE names split after '_'."""
    pieces: list[str] = []
    for word in text.split(" "):
        parts = word.split("_")
        if len(parts) > 1 and word.isupper():
            pieces += [p + "_" for p in parts[:-1]] + [parts[-1] + " "]
        else:
            pieces.append(word + " ")
    return pieces


def num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str | float) -> ET.Element:
    element = ET.SubElement(
        parent,
        tag,
        {k.rstrip("_").replace("_", "-"): num(v) if isinstance(v, float) else str(v) for k, v in attrs.items()},
    )
    if text is not None:
        element.text = text
    return element


def tooltip(element: ET.Element, text: str) -> None:
    ET.SubElement(element, "title").text = text


@dataclass
class Scale:
    duration: float

    def x(self, t: float) -> float:
        return LEFT + max(0.0, min(1.0, t / self.duration)) * PLOT

    def column(self, t: float) -> int:
        return min(PLOT - 1, int(max(0.0, t / self.duration) * PLOT))


class Labels:
    """Places labels on one row, left to right, and refuses any that would overlap one placed before."""

    def __init__(self) -> None:
        self.taken: list[tuple[float, float]] = []

    def place(self, x: float, text: str, size: float) -> tuple[float, str] | None:
        width = text_width(text, size)
        anchor, start = "start", x + 3
        if start + width > WIDTH - 4:
            anchor, start = "end", x - 3 - width
        if start < LEFT + 2:  # it would run into the lane titles
            return None
        span = (start - 4, start + width + 4)
        if any(span[0] < b and a < span[1] for a, b in self.taken):
            return None
        self.taken.append(span)
        return (x + 3 if anchor == "start" else x - 3), anchor
