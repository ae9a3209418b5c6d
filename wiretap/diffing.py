"""``wiretap diff A B``: two recordings compared by behaviour, not bytes.

Compared: the method sequence (ids and volatile fields ignored; a run of the same message counts as
one, however long), each task's poll cadence (paired in order of creation), the final states, the
findings, and the latency per method (shown, never a difference by itself: machines are noisy).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.analysis.methods import sequence
from wiretap.analysis.report import report_recording
from wiretap.recording.reader import open_recording

CADENCE_TOLERANCE = 0.10


@dataclass
class Behaviour:
    report: dict[str, Any]
    methods: list[str]


@dataclass
class Difference:
    sections: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Shown, but not differences (latency)."""

    @property
    def differs(self) -> bool:
        return any(self.sections.values())


def _runs(items: list[tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    for direction, method in items:
        line = f"{direction} {method}"
        if lines and lines[-1].removesuffix(" (repeated)") == line:
            lines[-1] = f"{line} (repeated)"
        else:
            lines.append(line)
    return lines


def behaviour(path: Path) -> Behaviour:
    with open_recording(path) as reader:
        methods = _runs(sequence(reader.events()))
    return Behaviour(report_recording(path), methods)


def _tasks(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    lines = []
    tasks_a, tasks_b = a["tasks"], b["tasks"]
    if len(tasks_a) != len(tasks_b):
        lines.append(f"tasks: {len(tasks_a)} → {len(tasks_b)}")
    for n, (x, y) in enumerate(zip(tasks_a, tasks_b, strict=False), 1):
        name = f"task {n} ({x['tool'] or y['tool'] or x['protocol']})"
        for key in ("design", "requested_poll_ms", "final_state", "live_at_client_exit"):
            if x[key] != y[key]:
                lines.append(f"{name}: {key} {x[key]} → {y[key]}")
        mx = (x["intervals"] or {}).get("median")
        my = (y["intervals"] or {}).get("median")
        if (mx is None) != (my is None) or (mx and my and abs(my - mx) > CADENCE_TOLERANCE * mx):
            lines.append(f"{name}: median poll interval {mx} s → {my} s ({x['pattern']} → {y['pattern']})")
    return lines


def _findings(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    def codes(report: dict[str, Any]) -> dict[str, int]:
        counted: dict[str, int] = {}
        for f in report["findings"]:
            counted[f["code"]] = counted.get(f["code"], 0) + f["count"]
        return counted

    ca, cb = codes(a), codes(b)
    lines = [f"+ {code} ({cb[code]})" for code in sorted(set(cb) - set(ca))]
    lines += [f"- {code} ({ca[code]})" for code in sorted(set(ca) - set(cb))]
    return lines


def _latency(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    la = {r["method"]: r for r in a["latency"]}
    lines = []
    for row in b["latency"]:
        before = la.get(row["method"])
        if before and before["p50_ms"]:
            ratio = row["p50_ms"] / before["p50_ms"]
            lines.append(f"{row['method']}: p50 {before['p50_ms']} → {row['p50_ms']} ms ({ratio:.2f}×)")
    return lines


def diff(a: Path, b: Path) -> Difference:
    x, y = behaviour(a), behaviour(b)
    sequence_diff = [
        line.rstrip() for line in difflib.unified_diff(x.methods, y.methods, str(a), str(b), lineterm="", n=2)
    ]
    return Difference(
        sections={
            "method sequence": sequence_diff,
            "tasks": _tasks(x.report, y.report),
            "findings": _findings(x.report, y.report),
        },
        notes={"latency": _latency(x.report, y.report)},
    )
