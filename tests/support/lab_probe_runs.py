"""A lab probe session recorded by wiretap, its report and the probe's own log, and their times compared."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import wiretap
from support.report_schema import valid_report
from support.taprun import settled_read_all

# The peers' stdio clients pass the server only a few environment variables: name the wiretap under test.
WIRETAP = ["env", f"PYTHONPATH={Path(wiretap.__file__).resolve().parent.parent}", sys.executable, "-m", "wiretap"]

CLOSE = 0.005
"""Seconds: how far reported times are from the probe's log of them, as a rule (ms rounding, a pipe hop)."""
HOP = 0.05
"""Seconds: how far one of them may be, when a busy machine keeps the relay or the probe from a core."""

Json = dict[str, Any]


@dataclass
class Run:
    client: Json
    report: Json
    origin: float
    log: list[Json]

    def task(self) -> Json:
        [task] = self.report["tasks"]
        return task

    def t(self, entry: Json) -> float:
        return float(entry["mono_ns"]) / 1e9 - self.origin

    def polls(self, task_id: str) -> list[float]:
        return [self.t(e) for e in self.log if e.get("method") == "tasks/get" and e.get("task") == task_id]

    def states(self, task_id: str) -> list[tuple[float, str]]:
        """Each state the probe put on the wire for the task, when it first did."""
        seen: list[tuple[float, str]] = []
        for entry in self.log:
            mine = entry["event"] == "sent" and entry.get("task") == task_id and "status" in entry
            if mine and (not seen or seen[-1][1] != entry["status"]):
                seen.append((self.t(entry), entry["status"]))
        return seen

    def sent(self, method: str) -> list[Json]:
        return [e for e in self.log if e["event"] == "sent" and e.get("method") == method]


def report(recording: Path) -> Json:
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "report", str(recording), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return valid_report(json.loads(result.stdout))


def finish(client: subprocess.CompletedProcess[str], recording: Path, log: Path) -> Run:
    assert client.returncode == 0, client.stderr[-4000:]
    header, _, skipped = settled_read_all(recording)
    assert not skipped, skipped.describe()
    entries = [json.loads(row) for row in log.read_text().splitlines()]
    return Run(json.loads(client.stdout), report(recording), float(header["monotonic_origin"]), entries)


def assert_close(reported: Sequence[float | None], logged: Sequence[float], what: Sequence[str] = ()) -> None:
    """At least half the times within ``CLOSE`` of their log and every one within a ``HOP``: an offset in
    wiretap's clock moves them all, while a busy machine delays a hop now and then (of two times, one)."""
    assert len(reported) == len(logged), (reported, logged)
    names = list(what) or [f"time {n}" for n in range(len(reported))]
    shown = [f"{name}: reported {a}, logged {b:.4f}" for name, a, b in zip(names, reported, logged, strict=True)]
    times = [a for a in reported if a is not None]
    assert len(times) == len(logged), shown
    gaps = [abs(b - a) for a, b in zip(times, logged, strict=True)]
    assert statistics.median_low(gaps) <= CLOSE, shown
    assert max(gaps) <= HOP, shown


def assert_near(reported: float, logged: float) -> None:
    """One time: a hop under load away at most (``assert_close`` holds half of a list to ``CLOSE``)."""
    assert abs(reported - logged) <= HOP, (reported, logged)
