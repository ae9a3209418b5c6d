"""One lane of the SVG timeline: ticks (or a density strip), the state band, question windows with
their longest gap, marks, and the lane's title."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from wiretap.analysis.model import label, seconds
from wiretap.export.draw import (
    BEFORE_STATE,
    ERROR,
    GAP,
    INK,
    LEFT,
    MARK_COLOURS,
    MUTED,
    PLOT,
    QUESTION_EDGE,
    QUESTION_FILL,
    STATE_COLOURS,
    TICK_COLOURS,
    WIDTH,
    Labels,
    Scale,
    el,
    num,
    text_width,
    tooltip,
    wrap,
)
from wiretap.export.lanes import Lane, Mark, Ticks, Window

TICKS_PER_PX = 2
"""More ticks than this in one pixel column are drawn as a density strip there."""
MIN_GAP_PX = 6
"""A longest gap narrower than this is left to the question's tooltip: a bracket would be a smudge."""
LANE_HEIGHT = {"task": 60, "tasks": 44, "questions": 44, "traffic": 42}
DETAIL_SIZE = 10.5


def _columns(times: Iterable[float], scale: Scale) -> list[int]:
    counts = [0] * PLOT
    for t in times:
        counts[scale.column(t)] += 1
    return counts


def draw_ticks(parent: ET.Element, ticks: Ticks, top: float, bottom: float, scale: Scale) -> bool:
    """One tick per instant where a pixel column holds at most TICKS_PER_PX of them; a density strip
    (darker: more per pixel) where it holds more. Returns whether any strip was drawn."""
    if not ticks.times:
        return False
    counts = _columns(ticks.times, scale)
    colour = TICK_COLOURS[ticks.role]
    group = el(parent, "g", class_=f"ticks {ticks.role}", stroke=colour, stroke_width=1.5)
    seen: set[int] = set()
    for t in ticks.times:
        x = scale.x(t)
        if counts[scale.column(t)] > TICKS_PER_PX or round(x * 2) in seen:  # half a pixel apart: one tick
            continue
        seen.add(round(x * 2))
        el(group, "line", class_=ticks.role, x1=x, x2=x, y1=top, y2=bottom, data_t=f"{t:.3f}")
    crowded = [c if c > TICKS_PER_PX else 0 for c in counts]
    if not any(crowded):
        return False
    densest = max(crowded)
    strip = el(
        parent, "g", class_=f"density {ticks.role}", fill=colour, data_count=sum(crowded), data_max_per_px=densest
    )
    per_px_ms = scale.duration / PLOT * 1000
    tooltip(strip, f"{sum(crowded)} {ticks.name} in crowded columns, up to {densest} per pixel ({per_px_ms:.0f} ms)")
    column = 0
    while column < PLOT:
        run = column
        while run + 1 < PLOT and crowded[run + 1] == crowded[column]:
            run += 1
        if crowded[column]:
            shade = math.log(crowded[column] / TICKS_PER_PX) / math.log(densest / TICKS_PER_PX)
            width = float(run - column + 1)
            opacity = f"{0.35 + 0.65 * shade:.2f}"
            el(strip, "rect", x=LEFT + column, y=top, width=width, height=bottom - top, opacity=opacity)
        column = run + 1
    return True


def _state_band(parent: ET.Element, lane: Lane, y: float, scale: Scale) -> ET.Element | None:
    """The task's life from creation to its end, coloured by the state in effect at each pixel."""
    if lane.span is None:
        return None
    start, stop = lane.span
    first, last = scale.column(start), scale.column(stop)
    group = el(parent, "g", class_="states")
    runs: list[tuple[int, int, str]] = []
    index, state = 0, ""
    for column in range(first, last + 1):
        t_mid = (column + 0.5) / PLOT * scale.duration
        while index < len(lane.states) and lane.states[index][0] <= max(t_mid, start):
            state = lane.states[index][1]
            index += 1
        if runs and runs[-1][2] == state:
            runs[-1] = (runs[-1][0], column, state)
        else:
            runs.append((column, column, state))
    for begin, end, run_state in runs:
        fill = STATE_COLOURS.get(run_state, BEFORE_STATE) if run_state else BEFORE_STATE
        rect = el(
            group,
            "rect",
            class_=f"state {run_state or 'none'}",
            x=LEFT + begin,
            y=y - 3,
            width=end - begin + 1,
            height=6.0,
            fill=fill,
        )
        tooltip(rect, run_state.replace("_", " ") or "before its first state")
    return group


def _window(parent: ET.Element, window: Window, top: float, height: float, scale: Scale) -> None:
    x0, x1 = scale.x(window.start), scale.x(window.end)
    rect = el(
        parent,
        "rect",
        class_="question",
        x=x0,
        y=top,
        width=max(1.5, x1 - x0),
        height=height,
        fill=QUESTION_FILL,
        fill_opacity=0.28,
        stroke=QUESTION_EDGE,
        stroke_width=1.0,
        data_start=f"{window.start:.3f}",
        data_end=f"{window.end:.3f}",
    )
    if not window.closed:
        rect.set("stroke-dasharray", "4 3")
    tooltip(rect, window.label)


def _gap(parent: ET.Element, window: Window, y: float, scale: Scale) -> None:
    if window.gap is None or scale.x(window.gap[1]) - scale.x(window.gap[0]) < MIN_GAP_PX:
        return
    a, b = window.gap
    gap = window.gap_seconds if window.gap_seconds is not None else b - a
    x0, x1 = scale.x(a), scale.x(b)
    group = el(parent, "g", class_="gap", stroke=GAP, stroke_width=1.5, data_length=f"{gap:.3f}")
    tooltip(group, f"{label('longest_gap')} while the question was open: {seconds(gap)} ({a:.2f}–{b:.2f} s)")
    el(group, "line", x1=x0, x2=x1, y1=y, y2=y)
    el(group, "line", x1=x0, x2=x0, y1=y - 4, y2=y + 4)
    el(group, "line", x1=x1, x2=x1, y1=y - 4, y2=y + 4)
    text = f"{label('longest_gap')} {seconds(gap)}"
    width = text_width(text, 10)
    middle = (x0 + x1) / 2
    anchor, x = "middle", middle
    if middle - width / 2 < LEFT:
        anchor, x = "start", LEFT + 1.0
    elif middle + width / 2 > WIDTH - 4:
        anchor, x = "end", WIDTH - 4.0
    el(
        parent,
        "text",
        text,
        class_="gap-label",
        x=x,
        y=y + 13,
        text_anchor=anchor,
        font_size=10,
        fill=GAP,
        font_weight="600",
    )


def _mark_shape(parent: ET.Element, mark: Mark, x: float, y: float) -> None:
    if mark.role == "state":
        colour = STATE_COLOURS.get(mark.state or "unknown", BEFORE_STATE)
        shape = el(
            parent, "circle", class_="mark state", cx=x, cy=y, r=3.5, fill=colour, stroke="#ffffff", stroke_width=1.0
        )
    elif mark.role == "cancel":
        shape = el(
            parent,
            "path",
            class_="mark cancel",
            d=f"M{num(x - 4)} {num(y - 4)}l8 8m0 -8l-8 8",
            stroke=ERROR,
            stroke_width=2.0,
        )
    elif mark.role == "answer":
        shape = el(
            parent,
            "circle",
            class_="mark answer",
            cx=x,
            cy=y,
            r=3.5,
            fill="#ffffff",
            stroke=MARK_COLOURS["answer"],
            stroke_width=2.0,
        )
    else:
        shape = el(parent, "path", class_="mark finding", d=f"M{num(x)} {num(y + 5)}l4 7h-8z", fill=ERROR)
    tooltip(shape, f"{mark.label} at {mark.t:.2f} s")


def _marks(parent: ET.Element, marks: Sequence[Mark], band_y: float, label_y: float, scale: Scale) -> None:
    group = el(parent, "g", class_="marks")
    drawn: set[tuple[str, int]] = set()
    for mark in sorted(marks, key=lambda m: m.t):
        key = (mark.role, round(scale.x(mark.t)))
        if key in drawn:
            continue
        drawn.add(key)
        _mark_shape(group, mark, scale.x(mark.t), band_y)
    # Labels: the unusual marks first, then the first and last state, then the others as room allows.
    states = [m for m in marks if m.role == "state"]
    ends = [states[-1], states[0]] if states else []
    ordered = [m for m in marks if m.role != "state"] + ends + [m for m in states if all(m is not e for e in ends)]
    labels = Labels()
    for mark in ordered:
        text = mark.label if mark.role in ("state", "finding") else mark.label.split(" (")[0]
        placed = labels.place(scale.x(mark.t), text, 10)
        if placed is None:
            continue
        x, anchor = placed
        colour = (
            STATE_COLOURS.get(mark.state or "", MUTED) if mark.role == "state" else MARK_COLOURS.get(mark.role, INK)
        )
        if mark.role == "state" and mark.state in ("working", "submitted"):
            colour = "#1d4ed8"
        elif mark.role == "state" and mark.state in ("input_required", "auth_required"):
            colour = "#b45309"
        el(
            group,
            "text",
            text,
            class_=f"label {mark.role}",
            x=x,
            y=label_y,
            text_anchor=anchor,
            font_size=10,
            fill=colour,
        )


def detail_lines(lane: Lane) -> list[str]:
    """The lane's detail, wrapped to the title column (never clipped)."""
    return [piece for line in lane.detail.splitlines() for piece in wrap(line, DETAIL_SIZE, LEFT - 16)]


def lane_height(lane: Lane) -> int:
    """Tall enough for the title and every detail line."""
    titles = len(wrap(lane.heading or lane.title, 12, LEFT - 16))
    return max(LANE_HEIGHT[lane.kind], 30 + 14 * (titles - 1) + 13 * len(detail_lines(lane)))


def draw_lane(svg: ET.Element, lane: Lane, top: float, scale: Scale) -> bool:
    height = lane_height(lane)
    group = el(svg, "g", class_=f"lane {lane.kind}", data_title=lane.title)
    title_lines = wrap(lane.heading or lane.title, 12, LEFT - 16)
    for n, line in enumerate(title_lines):
        title = el(group, "text", line, x=8.0, y=top + 20 + 14 * n, font_size=12, font_weight="600", fill=INK)
        tooltip(title, lane.title)
    first = top + 34 + 14 * (len(title_lines) - 1)
    for n, line in enumerate(detail_lines(lane)):
        detail = el(group, "text", line, x=8.0, y=first + 13 * n, font_size=DETAIL_SIZE, fill=MUTED)
        tooltip(detail, lane.detail)
    for window in lane.windows:
        _window(group, window, top + 3, height - 6, scale)
    dense = False
    if lane.kind == "task":
        band = top + 27
        states = _state_band(group, lane, band, scale)
        if any(draw_ticks(group, ticks, band - 8, band + 8, scale) for ticks in lane.ticks):
            dense = True
            if states is not None:  # keep the states visible on a solid strip of polls
                group.remove(states)
                group.append(states)
        _marks(group, lane.marks, band, top + 14, scale)
        for window in lane.windows:
            _gap(group, window, top + 44, scale)
    elif lane.kind == "tasks":
        middle = top + height / 2 - 2
        dense |= any(draw_ticks(group, ticks, middle - 8, middle + 8, scale) for ticks in lane.ticks)
    elif lane.kind == "questions":
        for window in lane.windows:
            _gap(group, window, top + 22, scale)
    else:
        middle = top + height / 2
        if lane.span is not None:
            x0, x1 = scale.x(lane.span[0]), scale.x(lane.span[1])
            el(group, "line", class_="life", x1=x0, x2=x1, y1=middle, y2=middle, stroke="#94a3b8", stroke_width=1.0)
        for ticks in lane.ticks:
            above = ticks.role == "c2s"
            dense |= draw_ticks(
                group, ticks, middle - 11 if above else middle + 1, middle - 1 if above else middle + 11, scale
            )
    return dense
