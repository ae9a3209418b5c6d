"""Timeline rows of ``observed`` events: facts a client logged, imported into a recording (no messages)."""

from __future__ import annotations

import json

from wiretap.analysis.summarize import clip
from wiretap.recording.events import Event


def _took(event: Event) -> str:
    seconds = event.get("duration")
    if isinstance(seconds, int | float):
        return f"{seconds * 1000:.0f} ms"
    return str(event.get("logged_duration", ""))


def _result_text(result: object) -> str:
    if isinstance(result, list):
        texts = [str(b.get("text")) for b in result if isinstance(b, dict) and b.get("type") == "text"]
        if texts:
            return " ".join(texts)
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def observed_summary(event: Event) -> tuple[str, str]:
    """The row's title and summary; the title says the fact was observed in a log, not recorded."""
    what = str(event.get("what", "log"))
    use = f" [{event['tool_use_id']}]" if event.get("tool_use_id") else ""
    if what == "tool_call":
        shown = f" {json.dumps(event['input'], ensure_ascii=False)}" if "input" in event else ""
        return "log: tool call", clip(f"{event.get('tool')}{shown}{use}")
    if what == "tool_result":
        outcome = "ok" if event.get("outcome") == "ok" else "error"
        detail = event.get("error") if outcome == "error" else event.get("result")
        shown = f" {_result_text(detail)}" if detail is not None else ""
        return "log: tool result", clip(f"{event.get('tool')} {outcome} {_took(event)}{shown}{use}")
    if what == "connected":
        return "log: connected", f"{event.get('transport')} in {event.get('logged_duration')}"
    if what == "capabilities":
        info = event.get("server_info") if isinstance(event.get("server_info"), dict) else {}
        server = f" {info.get('name', '')} {info.get('version', '')}".rstrip() if info else ""
        return "log: capabilities", clip(f"{event.get('protocol_version', '?')} {event.get('era', '')}{server}")
    title = "log" if what == "log" else f"log: {what.replace('_', ' ')}"
    return title, clip(str(event.get("text", "")))
