"""The report of every recording of a source, recomputed off the loop, at most once per debounce."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from wiretap.analysis.model import QuestionRow, Report, TaskRow, plain
from wiretap.analysis.report import build_report
from wiretap.export.lanes import timeline_of
from wiretap.export.svg import render_svg
from wiretap.ui.source import Source

QUIET_SECONDS = 0.3
"""Recompute once traffic pauses this long…"""
MAX_WAIT_SECONDS = 1.5
"""…or this long after the first change, whichever comes first."""


def _task(task: TaskRow) -> dict[str, Any]:
    shown: dict[str, Any] = plain(replace(task, polls=[], states=[]))
    return shown | {"polls": len(task.polls)}


def _question(question: QuestionRow) -> dict[str, Any]:
    shown: dict[str, Any] = plain(replace(question, polls_inside=[]))
    return shown | {"polls_inside": len(question.polls_inside)}


def _digest(report: Report) -> dict[str, Any]:
    """What the page shows of a report: everything but the per-poll times (counted instead)."""
    return {
        "recording": plain(report.recording),
        "messages": plain(report.messages),
        "verdicts": plain(report.verdicts),
        "poll_rule": report.poll_rule,
        "findings": plain(report.findings),
        "latency": plain(report.latency),
        "client_exit": plain(report.client_exit),
        "server_exit": plain(report.server_exit),
        "tasks": [_task(task) for task in report.tasks],
        "questions": [_question(question) for question in report.questions],
    }


def _one(path: Path, name: str, client_exited: float | None) -> dict[str, Any]:
    try:
        report = build_report(path, client_exited_monotonic=client_exited, timeline=True, wait=None)
        return {"name": name, "report": _digest(report), "svg": render_svg(timeline_of(report))}
    except Exception as exc:  # a recording the analyses choke on must not stop the others' reports
        return {"name": name, "error": f"{path.name}: cannot report it: {exc!r}"[:500]}


class Reports:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.version = 0
        self.servers: list[dict[str, Any]] = []
        self._took = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _changed_since(self, seen: int) -> None:
        async with self.source.changed:
            await self.source.changed.wait_for(lambda: self.source.generation != seen)

    async def _run(self) -> None:
        seen = -1
        loop = asyncio.get_running_loop()
        while True:
            await self._changed_since(seen)
            first = loop.time()
            # A report that takes long to compute is recomputed less often: at most half the time.
            longest = max(MAX_WAIT_SECONDS, self._took)
            while True:
                before = self.source.generation
                await asyncio.sleep(QUIET_SECONDS)
                if (self.source.generation == before and loop.time() - first >= self._took) or (
                    loop.time() - first >= longest
                ):
                    break
            while self.source.catching_up:
                await asyncio.sleep(QUIET_SECONDS)
            seen = self.source.generation
            ready = [r for r in self.source.recordings if r.header is not None]
            exited = self.source.client_exited_monotonic
            began = loop.time()
            servers = await asyncio.gather(*(asyncio.to_thread(_one, r.path, r.name, exited) for r in ready))
            self.servers = [s | {"shift": round(self.source.shift(r), 6)} for s, r in zip(servers, ready, strict=True)]
            self._took = loop.time() - began
            self.version += 1
            async with self.source.changed:
                self.source.changed.notify_all()
