"""``wiretap diff`` as text, Markdown or JSON."""

from __future__ import annotations

from typing import IO

from wiretap.judge.diff import Difference
from wiretap.render.json_text import indented

SAME = "no difference in behaviour"
DIFFERENT = "the recordings behave differently"


def _blocks(result: Difference) -> list[tuple[str, list[str], bool]]:
    """(heading, lines, for information only) for every section with something to say."""
    many = len(result.servers) > 1
    blocks: list[tuple[str, list[str], bool]] = []
    if result.unpaired:
        blocks.append(("servers", result.unpaired, False))
    for server in result.servers:
        prefix = f"{server.name}: " if many else ""
        blocks += [(prefix + title, lines, False) for title, lines in server.sections.items() if lines]
        blocks += [(prefix + title, lines, True) for title, lines in server.notes.items() if lines]
    return blocks


def render_text(result: Difference, out: IO[str]) -> None:
    for title, lines, info in _blocks(result):
        out.write(f"== {title}{' (for information)' if info else ''}\n")
        out.writelines(f"  {line}\n" for line in lines)
    out.write((DIFFERENT if result.differs else SAME) + "\n")


def render_markdown(result: Difference, out: IO[str]) -> None:
    out.write(f"## wiretap diff\n\n`{result.a}` → `{result.b}`: **{DIFFERENT if result.differs else SAME}**\n")
    for title, lines, info in _blocks(result):
        out.write(f"\n### {title}{' (for information)' if info else ''}\n\n")
        if title.endswith("method sequence"):
            out.write("```diff\n" + "\n".join(lines) + "\n```\n")
        else:
            out.writelines(f"- {_cell(line)}\n" for line in lines)


def render_json(result: Difference, out: IO[str]) -> None:
    out.write(indented(result.as_dict()) + "\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
