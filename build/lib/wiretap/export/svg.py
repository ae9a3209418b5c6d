"""A timeline as a hand-written SVG, 800 px wide: lanes on a shared time axis, readable in a blog post.

Size stays bounded however long the recording: ticks crowding a pixel column become a density strip
(svg_lane.TICKS_PER_PX), state bands and dots are drawn per pixel, and labels that would overlap are
left to their tooltips.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from wiretap.export.draw import (
    ERROR,
    FONT,
    GAP,
    GRID,
    INK,
    LANES_TOP,
    LEFT,
    MUTED,
    POLL,
    QUESTION_EDGE,
    QUESTION_FILL,
    STATE_COLOURS,
    SVG_NS,
    TICK_COLOURS,
    WIDTH,
    Labels,
    Scale,
    el,
    fit,
    num,
    text_width,
    tooltip,
    wrap,
)
from wiretap.export.lanes import Moment, Timeline
from wiretap.export.svg_lane import draw_lane, lane_height

_STATE_NAMES = [
    ("submitted", "submitted"),
    ("working", "working"),
    ("input_required", "input required"),
    ("auth_required", "auth required"),
    ("completed", "completed"),
    ("failed", "failed"),
    ("rejected", "rejected"),
    ("cancelled", "cancelled"),
    ("unknown", "unknown state"),
]
_STEPS = [60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0, 43200.0, 86400.0]


def nice_step(duration: float) -> float:
    """An axis step of 1, 2 or 5 × 10^k seconds (whole minutes and hours past a minute), 4–8 steps."""
    target = duration / 8
    if target > 30:
        return next((s for s in _STEPS if s >= target), _STEPS[-1] * math.ceil(target / _STEPS[-1]))
    power = 10.0 ** math.floor(math.log10(target)) if target > 0 else 1.0
    return next(m * power for m in (1, 2, 5, 10) if m * power >= target)


def axis_label(value: float, step: float) -> str:
    if step >= 60:
        hours, minutes = divmod(round(value / 60), 60)
        return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f} s"


def _moments(svg: ET.Element, moments: list[Moment], bottom: float, scale: Scale) -> None:
    rows = [Labels(), Labels()]
    for moment in moments:
        x = scale.x(moment.t)
        colour = ERROR if moment.role == "client-exit" else "#334155"
        group = el(svg, "g", class_=f"moment {moment.role}", data_t=f"{moment.t:.3f}")
        el(
            group,
            "line",
            x1=x,
            x2=x,
            y1=LANES_TOP - 4,
            y2=bottom,
            stroke=colour,
            stroke_width=1.5,
            stroke_dasharray="5 3",
        )
        for y, row in zip((LANES_TOP - 34, LANES_TOP - 48), rows, strict=True):
            placed = row.place(x, moment.label, 11)
            if placed is not None:
                tx, anchor = placed
                el(
                    group,
                    "text",
                    moment.label,
                    x=tx,
                    y=y,
                    text_anchor=anchor,
                    font_size=11,
                    fill=colour,
                    font_weight="600",
                )
                break
        tooltip(group, moment.label)


def _axis(svg: ET.Element, bottom: float, scale: Scale) -> None:
    step = nice_step(scale.duration)
    group = el(svg, "g", class_="axis", font_size=10, fill=MUTED)
    value = 0.0
    while value <= scale.duration + 1e-9:
        x = scale.x(value)
        el(group, "line", x1=x, x2=x, y1=LANES_TOP, y2=bottom, stroke=GRID, stroke_width=1.0)
        anchor = "start" if value == 0 else "middle"
        el(group, "text", axis_label(value, step), x=x, y=LANES_TOP - 8, text_anchor=anchor)
        value += step


def _legend(svg: ET.Element, timeline: Timeline, top: float, dense: bool) -> float:
    kinds = {lane.kind for lane in timeline.lanes}
    items: list[tuple[str, str]] = []
    if kinds & {"task", "tasks"}:
        items.append(("poll", "poll"))
    present = {state for lane in timeline.lanes for _, state in lane.states}
    items += [(state, name) for state, name in _STATE_NAMES if state in present]
    if any(mark.role == "cancel" for lane in timeline.lanes for mark in lane.marks):
        items.append(("cancel", "cancel sent"))
    if any(lane.windows for lane in timeline.lanes):
        items += [("question", "question open"), ("gap", "longest gap while open")]
    if "traffic" in kinds:
        items += [("c2s", "message to server"), ("s2c", "message from server"), ("error", "error")]
    if any(m.role == "client-exit" for m in timeline.moments):
        items.append(("client-exit", "client exit"))
    if any(m.role == "server-exit" for m in timeline.moments):
        items.append(("server-exit", "server exit"))
    if any(m.role == "finding" for lane in timeline.lanes for m in lane.marks):
        items.append(("finding", "flagged (a finding)"))
    if dense:
        items.append(("density", "darker: more per pixel"))
    group = el(svg, "g", class_="legend", font_size=10.5, fill=MUTED)
    x, y = 8.0, top
    for key, text in items:
        width = 22 + text_width(text, 10.5) + 14
        if x + width > WIDTH - 8:
            x, y = 8.0, y + 18
        _legend_sample(group, key, x, y)
        el(group, "text", text, x=x + 22, y=y + 4)
        x += width
    keys = [lane.key for lane in timeline.lanes if lane.key]
    if keys:
        y += 4
    for line in (piece for key in keys for piece in wrap(key, 10.5, WIDTH - 16)):
        y += 14
        el(group, "text", line, class_="key", x=8.0, y=y + 4)
    return y + 14


def _legend_sample(group: ET.Element, key: str, x: float, y: float) -> None:
    if key in STATE_COLOURS:
        el(group, "rect", x=x, y=y - 3, width=16.0, height=6.0, fill=STATE_COLOURS[key])
    elif key in ("poll", "c2s", "s2c", "error"):
        for dx in (3, 8, 13):
            el(group, "line", x1=x + dx, x2=x + dx, y1=y - 6, y2=y + 6, stroke=TICK_COLOURS[key], stroke_width=1.5)
    elif key == "cancel":
        el(group, "path", d=f"M{num(x + 4)} {num(y - 4)}l8 8m0 -8l-8 8", stroke=ERROR, stroke_width=2.0)
    elif key == "question":
        el(
            group,
            "rect",
            x=x,
            y=y - 6,
            width=16.0,
            height=12.0,
            fill=QUESTION_FILL,
            fill_opacity=0.28,
            stroke=QUESTION_EDGE,
        )
    elif key == "gap":
        el(group, "path", d=f"M{num(x)} {num(y - 4)}v8m0 -4h16m0 -4v8", stroke=GAP, stroke_width=1.5, fill="none")
    elif key in ("client-exit", "server-exit"):
        el(
            group,
            "line",
            x1=x + 8,
            x2=x + 8,
            y1=y - 7,
            y2=y + 7,
            stroke=ERROR if key == "client-exit" else "#334155",
            stroke_width=1.5,
            stroke_dasharray="3 2",
        )
    elif key == "finding":
        el(group, "path", d=f"M{num(x + 8)} {num(y - 4)}l4 7h-8z", fill=ERROR)
    else:
        for dx, opacity in ((0, 0.25), (5, 0.55), (10, 1.0)):
            el(group, "rect", x=x + dx, y=y - 6, width=5.0, height=12.0, fill=POLL, opacity=opacity)


def render_svg(timeline: Timeline) -> str:
    """The timeline as a standalone SVG document (UTF-8 text)."""
    scale = Scale(max(timeline.duration, 1e-3))
    heights = [lane_height(lane) for lane in timeline.lanes]
    bottom = LANES_TOP + sum(heights)
    svg = ET.Element(
        "svg",
        {
            "xmlns": SVG_NS,
            "width": str(WIDTH),
            "viewBox": f"0 0 {WIDTH} 0",
            "font-family": FONT,
            "font-size": "11",
            "role": "img",
            "aria-label": timeline.title,
            "class": "wiretap-timeline",
        },
    )
    ET.SubElement(svg, "title").text = timeline.title
    ET.SubElement(svg, "desc").text = timeline.subtitle
    el(svg, "rect", x=0.0, y=0.0, width="100%", height="100%", fill="#ffffff")
    el(
        svg,
        "text",
        fit(timeline.title, 14, WIDTH - 16),
        class_="title",
        x=8.0,
        y=22.0,
        font_size=14,
        font_weight="700",
        fill=INK,
    )
    el(svg, "text", fit(timeline.subtitle, 11, WIDTH - 16), class_="subtitle", x=8.0, y=40.0, fill=MUTED)
    y = float(LANES_TOP)
    for n, tall in enumerate(heights):
        background = "#f8fafc" if n % 2 == 0 else "#ffffff"
        el(svg, "rect", class_="lane-bg", x=0.0, y=y, width=float(WIDTH), height=float(tall), fill=background)
        y += tall
    _axis(svg, bottom, scale)
    for window in timeline.shaded:
        x0, x1 = scale.x(window.start), scale.x(window.end)
        el(
            svg,
            "rect",
            class_="question-across",
            x=x0,
            y=float(LANES_TOP),
            width=max(1.5, x1 - x0),
            height=float(bottom - LANES_TOP),
            fill=QUESTION_FILL,
            fill_opacity=0.1,
        )
    dense = False
    y = float(LANES_TOP)
    for n, lane in enumerate(timeline.lanes):
        dense |= draw_lane(svg, lane, y, scale)
        y += heights[n]
    el(
        svg,
        "line",
        x1=float(LEFT),
        x2=float(LEFT),
        y1=float(LANES_TOP),
        y2=float(bottom),
        stroke="#94a3b8",
        stroke_width=1.0,
    )
    _moments(svg, timeline.moments, float(bottom), scale)
    height = _legend(svg, timeline, bottom + 22, dense) + 8
    svg.set("height", num(height))
    svg.set("viewBox", f"0 0 {WIDTH} {num(height)}")
    ET.indent(svg, space="")
    return ET.tostring(svg, encoding="unicode", xml_declaration=False) + "\n"
