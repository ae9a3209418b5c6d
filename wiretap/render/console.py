"""Timeline rows to a terminal (rich colour), a pipe (plain text) or a machine (JSON lines)."""

from __future__ import annotations

import json
from typing import IO, Protocol

from rich.console import Console
from rich.text import Text

from wiretap.render.timeline import ERR, IN, LIFE, OUT, Row

_LANE_STYLES = {IN: "cyan", OUT: "green", LIFE: "magenta", ERR: "yellow"}
TITLE_WIDTH = 26


class RowPrinter(Protocol):
    where_column: bool
    """Whether rows carry an exchange/connection column (HTTP recordings)."""

    def print_row(self, row: Row) -> None: ...


def plain_line(row: Row, *, where_column: bool = False) -> str:
    where = f"{row.where:<5} " if where_column else ""
    return f"{row.t:7.2f}  {row.lane:<3}  {where}{row.title:<{TITLE_WIDTH}} {row.summary}".rstrip()


class PlainPrinter:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.where_column = False

    def print_row(self, row: Row) -> None:
        self._out.write(plain_line(row, where_column=self.where_column) + "\n")


class RichPrinter:
    def __init__(self, console: Console) -> None:
        self._console = console
        self.where_column = False

    def print_row(self, row: Row) -> None:
        style = "bold red" if row.error else _LANE_STYLES.get(row.lane, "")
        text = Text(f"{row.t:7.2f}  ", style="dim")
        text.append(f"{row.lane:<3}  ", style=style)
        if self.where_column:
            text.append(f"{row.where:<5} ", style="dim")
        text.append(f"{row.title:<{TITLE_WIDTH}} ", style="bold" if row.method else style)
        text.append(row.summary, style="red" if row.error else "")
        self._console.print(text, no_wrap=True, overflow="ellipsis", soft_wrap=False)


class JsonPrinter:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.where_column = True

    def print_row(self, row: Row) -> None:
        doc = {
            "t": row.t,
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
        self._out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def printer_for(out: IO[str], *, as_json: bool, color: bool | None) -> RowPrinter:
    if as_json:
        return JsonPrinter(out)
    use_color = out.isatty() if color is None else color
    if use_color:
        return RichPrinter(Console(file=out, force_terminal=True, highlight=False))
    return PlainPrinter(out)
