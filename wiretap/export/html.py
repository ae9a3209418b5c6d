"""``wiretap report --format html``: one self-contained page per report (no network: CSS and JS inline).

The verdicts with their evidence, the SVG timeline, the tables (tasks, open questions, findings,
latency) and every message, filterable, each expanding to its recorded JSON. ``page.html#q=tasks/get``
opens with that filter applied, so a link can point at the messages that matter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from html import escape
from typing import Any

from wiretap.analysis.model import Report
from wiretap.export.lanes import timeline_of
from wiretap.export.svg import render_svg
from wiretap.plural import plural
from wiretap.render.report_text import capped, counts
from wiretap.render.tables import SPECS, fmt, html_table

MAX_MESSAGES = 5000
"""Rows listed per recording; past that the page says how many it left out (wiretap show has them all)."""
MAX_JSON = 20_000
"""Characters of one event's JSON shown; the rest is cut with a note."""

STYLE = """
:root { --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --soft: #f8fafc; --accent: #1d4ed8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: var(--ink); background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; }
h3 { font-size: 15px; margin: 24px 0 8px; }
.meta, .rule, .note { color: var(--muted); font-size: 13px; }
.verdicts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 12px; margin: 12px 0; }
.verdict { border: 1px solid var(--line); border-left: 4px solid var(--accent); border-radius: 6px; padding: 10px 12px;
  background: var(--soft); }
.verdict h4 { margin: 0 0 4px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.verdict p { margin: 0 0 6px; }
.verdict ul { margin: 0; padding-left: 18px; color: #334155; font-size: 12.5px; }
figure.timeline { margin: 12px 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; }
figure.timeline svg { display: block; width: 100%; max-width: 1080px; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 4px 0 8px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sev { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px; font-weight: 600; }
.sev.error { background: #fee2e2; color: #991b1b; } .sev.warning { background: #fef3c7; color: #92400e; }
.sev.info { background: #e0f2fe; color: #075985; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0; position: sticky; top: 0;
  background: #fff; padding: 6px 0; z-index: 1; }
.filters input[type=search] { flex: 1 1 260px; padding: 5px 8px; border: 1px solid #cbd5e1; border-radius: 4px;
  font: inherit; }
.filters select { padding: 4px; font: inherit; }
.messages details { border-bottom: 1px solid var(--line); }
.messages summary { cursor: pointer; padding: 3px 4px; font: 12.5px/1.5 ui-monospace, "SFMono-Regular", Menlo, Consolas,
  monospace; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.messages summary:hover { background: var(--soft); }
.messages .t { color: var(--muted); display: inline-block; width: 6.5em; text-align: right; margin-right: 1em; }
.messages .lane { display: inline-block; width: 3.2em; font-weight: 600; }
.messages .IN .lane { color: #1d4ed8; } .messages .OUT .lane { color: #0f766e; }
.messages .ERR .lane { color: #b45309; }
.messages .method { display: inline-block; min-width: 14em; margin-right: 1em; }
.messages .error summary { color: #b91c1c; }
.messages pre { margin: 0 0 8px 7.5em; padding: 8px; background: var(--soft); border: 1px solid var(--line);
  border-radius: 4px; overflow-x: auto; font-size: 12px; }
.hidden { display: none; }
"""

SCRIPT = """
(function () {
  for (const section of document.querySelectorAll("section.recording")) {
    const text = section.querySelector("input.filter-text");
    const lane = section.querySelector("select.filter-lane");
    const errors = section.querySelector("input.filter-errors");
    const count = section.querySelector(".filter-count");
    const items = Array.from(section.querySelectorAll(".messages details"));
    function apply() {
      const words = text.value.toLowerCase().split(/\\s+/).filter(Boolean);
      let shown = 0;
      for (const item of items) {
        const hay = item.dataset.search;
        const ok = words.every((w) => hay.includes(w)) && (!lane.value || item.dataset.lane === lane.value)
          && (!errors.checked || item.dataset.error === "1");
        item.classList.toggle("hidden", !ok);
        if (ok) shown += 1;
      }
      count.textContent = shown + " of " + items.length + " shown";
    }
    text.addEventListener("input", apply);
    lane.addEventListener("change", apply);
    errors.addEventListener("change", apply);
    section.querySelector("button.expand").addEventListener("click", () => {
      for (const item of items) if (!item.classList.contains("hidden")) item.open = true;
    });
    section.querySelector("button.collapse").addEventListener("click", () => {
      for (const item of items) item.open = false;
    });
    const asked = new URLSearchParams(location.hash.slice(1)).get("q");
    if (asked) text.value = asked;
    apply();
  }
})();
"""


def _verdicts(report: Report) -> str:
    cards = []
    for key, title, verdict in report.verdicts.titled():
        evidence = "".join(f"<li>{escape(line)}</li>" for line in verdict.evidence)
        cards.append(
            f'<div class="verdict {key}"><h4>{escape(title)}</h4><p>{escape(verdict.verdict)}</p>'
            f"{f'<ul>{evidence}</ul>' if evidence else ''}</div>"
        )
    return f'<div class="verdicts">{"".join(cards)}</div>'


def _event_json(row: Any) -> str:
    text = json.dumps(row.event, indent=2, ensure_ascii=False)
    if len(text) > MAX_JSON:
        text = text[:MAX_JSON] + f"\n… {len(text) - MAX_JSON} more characters (see wiretap show --json)"
    return text


def _message_items(report: Report) -> Iterator[str]:
    for row in report.rows:
        search = escape(f"{row.t:.2f} {row.lane} {row.title} {row.summary} {row.where}".lower())
        lane = escape(row.lane)
        yield (
            f'<details class="{lane}{" error" if row.error else ""}" data-lane="{lane}" '
            f'data-error="{int(row.error)}" data-search="{search}">'
            f'<summary><span class="t">{row.t:.3f}</span><span class="lane">{lane}</span>'
            f'<span class="method">{escape(row.title)}</span>{escape(row.summary)}</summary>'
            f"<pre>{escape(_event_json(row))}</pre></details>"
        )
    if report.rows_left_out:
        yield (
            f'<p class="note">Only the first {len(report.rows)} events are listed '
            f"({report.rows_left_out} more); wiretap show lists all.</p>"
        )


def _filters() -> str:
    options = "".join(
        f'<option value="{escape(v)}">{escape(label)}</option>'
        for v, label in (
            ("", "all"),
            ("IN", "IN: to the server"),
            ("OUT", "OUT: from the server"),
            ("---", "lifecycle"),
            ("ERR", "stderr"),
        )
    )
    return (
        '<div class="filters"><input type="search" class="filter-text" placeholder="Filter: method, id, text…" '
        f'aria-label="Filter messages"><select class="filter-lane" aria-label="Direction">{options}</select>'
        '<label><input type="checkbox" class="filter-errors"> errors only</label>'
        '<button type="button" class="expand">expand shown</button>'
        '<button type="button" class="collapse">collapse all</button>'
        '<span class="filter-count note"></span></div>'
    )


def _section(report: Report, n: int) -> Iterator[str]:
    rec = report.recording
    yield f'<section class="recording" id="recording-{n}">'
    yield f"<h2>{escape(str(rec.name))} <span class=meta>({escape(str(rec.transport))})</span></h2>"
    skipped = f", {plural(rec.skipped_lines, 'unreadable line')} skipped" if rec.skipped_lines else ""
    yield (
        f'<p class="meta">{escape(str(rec.source))} · started {escape(str(rec.started))} · '
        f"{fmt(rec.duration)} s · {escape(counts(report))} · {plural(rec.events, 'event')}{skipped}</p>"
    )
    if rec.incomplete:
        yield f'<p class="incomplete"><strong>Not complete.</strong> {escape(rec.incomplete)}</p>'
    if (note := capped(report)) is not None:
        yield f'<p class="capped"><strong>{escape(note)}</strong></p>'
    yield _verdicts(report)
    yield f'<p class="rule">{escape(report.poll_rule)}.</p>'
    yield f'<h3>Timeline</h3><figure class="timeline">{render_svg(timeline_of(report))}</figure>'
    yield from (table for spec in SPECS if (table := html_table(spec, report)) is not None)
    yield f"<h3>Messages</h3>{_filters()}<div class=messages>"
    yield from _message_items(report)
    yield "</div></section>"


def render_html(reports: Sequence[Report], heading: str | None = None) -> str:
    """One HTML page for one or more reports, with everything inline. The reports must have been built with
    ``keep_rows`` (``MAX_MESSAGES``) for the messages to be listed."""
    names = ", ".join(str(r.recording.name) for r in reports)
    title = heading or f"wiretap report: {names}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
    ]
    if len(reports) > 1:
        links = "".join(
            f'<li><a href="#recording-{n}">{escape(str(r.recording.name))}</a></li>' for n, r in enumerate(reports)
        )
        parts.append(f"<nav><ul>{links}</ul></nav>")
    for n, report in enumerate(reports):
        parts += _section(report, n)
    parts.append(f"</main><script>{SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"
