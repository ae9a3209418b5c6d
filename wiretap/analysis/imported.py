"""Reports of imported recordings (``wiretap import``): what a client's logs say, and which verdicts they
cannot give because the logs hold no JSON-RPC messages."""

from __future__ import annotations

from typing import Any

from wiretap.analysis import model
from wiretap.recording.event_types import typed

SOURCES = {"claude-code": "Claude Code"}
_SHUTDOWN = ("signal_sent", "closed", "exited")


class ObservedFacts:
    """The ``observed`` events of a recording that a verdict can use: the shutdown steps a client logged."""

    def __init__(self) -> None:
        self.shutdown: list[tuple[float, str]] = []

    def feed(self, recorded: dict[str, Any]) -> None:
        event = typed(recorded)
        if "kind" in recorded and event["kind"] == "observed" and event.get("what") in _SHUTDOWN:
            self.shutdown.append((float(event.get("t", 0.0)), str(event.get("text") or event.get("what"))))


def source_name(header: dict[str, Any]) -> str:
    found = str(header.get("imported_from") or "a client")
    return SOURCES.get(found, found)


def mark_imported(report: model.Report, header: dict[str, Any], facts: ObservedFacts) -> None:
    """Each verdict of an imported recording says what its logs cannot show, instead of judging silence."""
    where = f"imported from {source_name(header)}'s logs, which hold no JSON-RPC messages"
    report.recording.imported = str(header.get("imported_from") or "unknown")
    verdicts = report.verdicts
    verdicts.poll_intervals = model.PollVerdict(f"Not known: {where}: poll intervals are not known.", [])
    verdicts.cancel_on_exit = model.CancelVerdict(
        f"Not known: {where}: whether tasks were live or cancelled at exit is not known.", []
    )
    verdicts.elicitation_gaps = model.QuestionVerdict(
        f"Not known: {where}: questions to the user and the polls around them are not known.", []
    )
    steps = [f"{t:.3f} s: {text}" for t, text in facts.shutdown]
    said = f"{source_name(header)} logged: " + "; ".join(text for _, text in facts.shutdown) + ". " if steps else ""
    verdicts.shutdown = model.ShutdownVerdict(
        f"{said}Not known from the logs: when stdin closed, the server's exit status ({where}).",
        steps,
        order=[text for _, text in facts.shutdown],
        orphaned=None,
    )
