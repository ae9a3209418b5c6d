"""``wiretap compare`` as a table in text or Markdown, or as JSON."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table

from wiretap.judge.compare import Comparison
from wiretap.render.json_text import indented


def render_text(result: Comparison, out: IO[str]) -> None:
    table = Table(show_lines=True)
    table.add_column("behaviour", style="bold")
    for client in result.clients:
        table.add_column(client, overflow="fold")
    for row in result.rows:
        table.add_row(row.behaviour, *row.values)
    Console(file=out, highlight=False, width=None if out.isatty() else 160).print(table)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: Comparison, out: IO[str]) -> None:
    out.write("| behaviour | " + " | ".join(_cell(c) for c in result.clients) + " |\n")
    out.write("|---" * (len(result.clients) + 1) + "|\n")
    for row in result.rows:
        out.write(f"| {_cell(row.behaviour)} | " + " | ".join(_cell(v) for v in row.values) + " |\n")


def render_json(result: Comparison, out: IO[str]) -> None:
    out.write(indented(result.as_dict()) + "\n")


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
