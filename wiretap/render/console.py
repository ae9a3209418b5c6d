"""Timeline rows to a terminal (rich colour), a pipe (plain text) or a machine (JSON lines)."""

from __future__ import annotations

import json
from typing import IO, Protocol

from rich.console import Console
from rich.text import Text

from wiretap.analysis.summarize import clip
from wiretap.analysis.timeline import ERR, IN, LIFE, OUT, Row
from wiretap.recording.origin import at, utc_ms

_LANE_STYLES = {IN: "cyan", OUT: "green", LIFE: "magenta", ERR: "yellow"}
TITLE_WIDTH = 26


class RowPrinter(Protocol):
    where_column: bool
    """Whether rows carry an exchange/connection column (HTTP recordings)."""
    server_width: int
    """The width of the server column (a session's interleaved recordings); 0 for none."""
    clock_zero_ns: int | None
    """The wall clock at t = 0 (``origin.origin_ns``) to show times on (``show --absolute``); None: seconds."""

    def print_row(self, row: Row) -> None: ...


def _server(row: Row, width: int) -> str:
    return f"{clip(row.server or '', width):<{width}}  " if width else ""


def when(row: Row, clock_zero_ns: int | None) -> str:
    """Seconds since t = 0, or the UTC time to the millisecond when the wall clock at t = 0 is given."""
    return f"{row.t:7.2f}" if clock_zero_ns is None else utc_ms(at(clock_zero_ns, row.t))


def plain_line(row: Row, *, where_column: bool = False, server_width: int = 0, clock_zero_ns: int | None = None) -> str:
    where = f"{row.where:<5} " if where_column else ""
    server = _server(row, server_width)
    t = when(row, clock_zero_ns)
    return f"{t}  {server}{row.lane:<3}  {where}{row.title:<{TITLE_WIDTH}} {row.summary}".rstrip()


class PlainPrinter:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.where_column = False
        self.server_width = 0
        self.clock_zero_ns: int | None = None

    def print_row(self, row: Row) -> None:
        line = plain_line(
            row, where_column=self.where_column, server_width=self.server_width, clock_zero_ns=self.clock_zero_ns
        )
        self._out.write(line + "\n")


class RichPrinter:
    def __init__(self, console: Console) -> None:
        self._console = console
        self.where_column = False
        self.server_width = 0
        self.clock_zero_ns: int | None = None

    def print_row(self, row: Row) -> None:
        style = "bold red" if row.error else _LANE_STYLES.get(row.lane, "")
        text = Text(f"{when(row, self.clock_zero_ns)}  ", style="dim")
        text.append(_server(row, self.server_width), style="blue")
        text.append(f"{row.lane:<3}  ", style=style)
        if self.where_column:
            text.append(f"{row.where:<5} ", style="dim")
        text.append(f"{row.title:<{TITLE_WIDTH}} ", style="bold" if row.method else style)
        text.append(row.summary, style="red" if row.error else "")
        self._console.print(text, no_wrap=True, overflow="ellipsis", soft_wrap=False)


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(doc, ensure_ascii=False)``, with one encoder for every row instead of one made per call."""


class JsonPrinter:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.where_column = True
        self.server_width = 0
        self.clock_zero_ns: int | None = None

    def print_row(self, row: Row) -> None:
        doc = {
            "t": row.t,
            "server": row.server,
            "lane": row.lane,
            "where": row.where or None,
            "title": row.title,
            "method": row.method,
            "id": row.id,
            "latency": round(row.latency, 6) if row.latency is not None else None,
            "error": row.error,
            "summary": row.summary,
            "event": row.event,
        }
        if self.clock_zero_ns is not None:
            doc["at"] = utc_ms(at(self.clock_zero_ns, row.t))
        self._out.write(_ENCODE(doc) + "\n")


def printer_for(out: IO[str], *, as_json: bool, color: bool | None) -> RowPrinter:
    if as_json:
        return JsonPrinter(out)
    use_color = out.isatty() if color is None else color
    if use_color:
        return RichPrinter(Console(file=out, force_terminal=True, highlight=False))
    return PlainPrinter(out)
