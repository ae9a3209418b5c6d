"""A recording as a Mermaid ``sequenceDiagram``: client and server (or the HTTP upstream) exchanging
messages, with each run of repeated polls collapsed into one line (``tasks/get T1 ×12, every 3.00 s``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

from wiretap.analysis.stats import median
from wiretap.analysis.task_rows import pattern
from wiretap.analysis.timeline import ERR, rows
from wiretap.export.sequence import CLIENT, SERVER, Line, Sequence
from wiretap.plural import plural
from wiretap.recording.events import Event
from wiretap.recording.reader import open_recording

REPEATED = 3
"""A method sent this many times in a row (with its answers in between) is drawn once, with a count."""
MAX_LINES = 400
"""Past this, the diagram ends with a note: nobody reads a longer sequence diagram."""
_ESCAPES = {"#": "#35;", ";": "#59;", "<": "#60;", ">": "#62;", "%": "#37;", "\n": " ", "\r": " "}


def escape(text: str) -> str:
    """Message text as Mermaid reads it: '#' and ';' would end it, '<' would open HTML."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text).strip() or "(empty)"


@dataclass
class _Run:
    lines: list[Line] = field(default_factory=list)

    def render(self) -> Iterator[str]:
        groups: dict[tuple[str, ...], list[Line]] = {}
        for line in self.lines:
            assert line.group is not None
            groups.setdefault(line.group, []).append(line)
        if all(sum(1 for ln in g if ln.request) < REPEATED for g in groups.values()):
            yield from (_draw(line) for line in self.lines)
            return
        for group in groups.values():
            asked = [ln for ln in group if ln.request]
            if len(asked) < REPEATED:
                yield from (_draw(line) for line in group)
                continue
            yield from _collapsed(asked, [ln for ln in group if not ln.request])


def _draw(line: Line) -> str:
    if not line.arrow:
        return f"    Note over {line.frm}: {escape(line.text)}"
    return f"    {line.frm}{line.arrow}{line.to}: {escape(line.text)}"


def _collapsed(asked: list[Line], answers: list[Line]) -> Iterator[str]:
    first, last = asked[0], asked[-1]
    gaps = [b.t - a.t for a, b in pairwise(asked)]
    label = first.group[-1] if first.group else ""
    # A back-off shows its steps (0.50, 1.00, 2.00, 4.00, 5.00 ×7 s); a steady run its one interval.
    steps = pattern(gaps)
    every = (f", every {median(gaps) or 0.0:.2f} s" if "," not in steps else f", intervals {steps}") if gaps else ""
    text = f"{first.t:.2f}–{last.t:.2f} s {label} ×{len(asked)}{every}"
    yield _draw(Line(first.t, text, first.arrow, first.frm, first.to))
    if answers:
        outcomes: list[tuple[str, int]] = []
        for answer in answers:
            if outcomes and outcomes[-1][0] == answer.outcome:
                outcomes[-1] = (answer.outcome, outcomes[-1][1] + 1)
            else:
                outcomes.append((answer.outcome, 1))
        shown = [o if n == 1 else f"{o} ×{n}" for o, n in outcomes]
        if len(shown) > 6:
            shown = [*shown[:4], "…", shown[-1]]
        failed = any(a.arrow == "--x" for a in answers)
        arrow = "--x" if failed and all(a.arrow == "--x" for a in answers) else "-->>"
        yield _draw(
            Line(
                answers[-1].t,
                f"{plural(len(answers), 'answer')}: {', '.join(shown)}",
                arrow,
                answers[0].frm,
                answers[0].to,
            )
        )


def diagram_lines(lines: Iterable[Line]) -> Iterator[str]:
    """Lines of the diagram body, with runs of collapsible traffic collapsed."""
    run = _Run()
    for line in lines:
        if line.group is not None:
            run.lines.append(line)
            continue
        if run.lines:
            yield from run.render()
            run = _Run()
        yield _draw(line)
    if run.lines:
        yield from run.render()


def _participant(header: Event) -> str:
    upstream = header.get("upstream")
    if header.get("transport") == "http" and isinstance(upstream, str):
        parts = urlsplit(upstream)
        return f"{parts.netloc}{parts.path if parts.path not in ('', '/') else ''}"
    return f"{header.get('name', 'server')} (server)"


def render_mermaid(header: Event, events: Iterable[Event]) -> str:
    """A ``sequenceDiagram`` of one recording's exchange."""
    source = Sequence(SERVER)
    lines = (line for row in rows(events) if row.lane != ERR for line in source.lines(row))
    out = [
        "sequenceDiagram",
        f"    participant {CLIENT} as {escape('client')}",
        f"    participant {SERVER} as {escape(_participant(header))}",
    ]
    drawn = 0
    body = diagram_lines(lines)
    for text in body:
        if drawn == MAX_LINES:
            rest = 1 + sum(1 for _ in body)
            out.append(f"    Note over {CLIENT},{SERVER}: {escape(f'… {rest} more lines: see wiretap show')}")
            break
        out.append(text)
        drawn += 1
    if drawn == 0:
        out.append(f"    Note over {CLIENT},{SERVER}: no messages in this recording")
    return "\n".join(out) + "\n"


def mermaid_of_recording(path: Path) -> str:
    with open_recording(path) as reader:
        return render_mermaid(reader.header, reader.events())
