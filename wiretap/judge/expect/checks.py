"""The checks an expectations file can name: each judges one set of facts.

A check is a function ``(arg, facts) -> Outcome`` registered in ``CHECKS``; its argument was validated
first by the function of the same name in ``VALIDATORS``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wiretap.analysis.findings import SEVERITY_ORDER
from wiretap.analysis.model import FIGURES, FindingRow, Report
from wiretap.plural import plural


@dataclass
class Facts:
    """What the checks judge: the report of one recording and its method sequence."""

    report: Report
    sequence: list[tuple[str, str]]


@dataclass
class Outcome:
    ok: bool
    summary: str
    evidence: list[str] = field(default_factory=list)


def _tolerance(value: Any) -> float:
    if isinstance(value, str) and value.strip().endswith("%"):
        return float(value.strip()[:-1]) / 100
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1:
        return float(value)
    raise ValueError(f"'within' takes a percentage such as 10% (or a fraction below 1), not {value!r}")


def _mapping(arg: Any, allowed: set[str], name: str) -> dict[str, Any]:
    if not isinstance(arg, dict) or not arg or set(arg) - allowed:
        raise ValueError(f"'{name}' takes a mapping with {', '.join(sorted(allowed))}")
    return arg


def poll_interval(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"within", "median_between", "every"}, "poll_interval")
    tasks = [t for t in facts.report.tasks if t.intervals is not None and t.median_interval is not None]
    if not tasks:
        return Outcome(False, "no task was polled twice, so there is no poll interval to check")
    failures, evidence = [], []
    for task in tasks:
        wanted_ms = task.requested_poll_ms if task.requested_poll_ms is not None else task.applied_poll_ms
        # The client's own cadence: after any back-off, and not across a question put to the user.
        settled = task.settled_interval is not None
        median = task.settled_interval if task.settled_interval is not None else task.median_interval or 0.0
        name = FIGURES["settled_interval" if settled else "median_interval"]
        line = f"task {task.id}: {name} {median:.3f} s, asked {wanted_ms} ms, intervals {task.pattern}"
        evidence.append(line)
        if "within" in spec:
            if wanted_ms is None:
                failures.append(f"task {task.id}: the server asked for no interval to compare with")
                continue
            tolerance, wanted = _tolerance(spec["within"]), wanted_ms / 1000
            observed = task.cadence if spec.get("every") else [median]
            off = [v for v in observed if abs(v - wanted) > tolerance * wanted]
            if off:
                failures.append(
                    f"task {task.id}: {plural(len(off), 'interval')} outside {wanted:.3f} s ± "
                    f"{tolerance:.0%} (e.g. {off[0]:.3f} s)"
                )
        if "median_between" in spec:
            low, high = spec["median_between"]
            if not low <= median <= high:
                failures.append(f"task {task.id}: {name} {median:.3f} s is not between {low} and {high} s")
    if failures:
        return Outcome(False, "; ".join(failures), evidence)
    return Outcome(True, f"{plural(len(tasks), 'task')} polled as expected", evidence)


def cancel_on_exit(arg: Any, facts: Facts) -> Outcome:
    verdict = facts.report.verdicts.cancel_on_exit
    sent = verdict.sent
    actual = "no_live_tasks" if sent is None else "sent" if sent else "not_sent"
    if facts.report.client_exit is None:
        actual = "unknown"
    return Outcome(actual == arg, f"expected {arg}, the recording shows {actual}: {verdict.verdict}", verdict.evidence)


def _findings(facts: Facts) -> list[FindingRow]:
    return list(facts.report.findings)


def no_findings(arg: Any, facts: Facts) -> Outcome:
    spec = {} if arg is True or arg is None else dict(arg)
    limit = SEVERITY_ORDER.get(spec.get("severity", "info"), 2)
    codes = spec.get("codes")
    hits = [f for f in _findings(facts) if SEVERITY_ORDER[f.severity] <= limit and (not codes or f.code in codes)]
    evidence = [f"{f.severity} {f.code} at {', '.join(f'{t:.2f}' for t in f.times)} s: {f.message}" for f in hits]
    return Outcome(
        not hits, f"{plural(len(hits), 'finding')} that should not be there" if hits else "no such finding", evidence
    )


def finding(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"code", "min_count"}, "finding")
    hits = [f for f in _findings(facts) if f.code == spec.get("code")]
    count = sum(f.count for f in hits)
    wanted = int(spec.get("min_count", 1))
    return Outcome(
        count >= wanted,
        f"{spec.get('code')} seen {plural(count, 'time')}, expected at least {wanted}",
        [f"{f.code} at {f.times}: {f.message}" for f in hits],
    )


def max_elicitation_gap(arg: Any, facts: Facts) -> Outcome:
    too_long = [q for q in facts.report.questions if (q.longest_gap or 0) > arg]
    evidence = [
        f"{q.kind} {q.task or ', '.join(q.keys)}: open {q.opened}–{q.closed} s, {FIGURES['longest_gap']} "
        f"{q.longest_gap} s"
        for q in facts.report.questions
    ]
    summary = (
        f"{plural(len(too_long), 'open question')} with a polling gap over {arg} s"
        if too_long
        else f"every gap while a question was open is at most {arg} s"
    )
    return Outcome(not too_long, summary, evidence)


def method_sequence(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"contains", "starts_with", "dir"}, "method_sequence")
    direction = spec.get("dir", "c2s")
    methods = [m for d, m in facts.sequence if d == direction]
    if "starts_with" in spec:
        wanted = list(spec["starts_with"])
        ok = methods[: len(wanted)] == wanted
        return Outcome(ok, f"{direction} starts with {methods[: len(wanted)]}, expected {wanted}")
    wanted = list(spec.get("contains", []))
    position = 0
    for method in methods:
        if position < len(wanted) and fnmatch.fnmatchcase(method, wanted[position]):
            position += 1
    ok = position == len(wanted)
    missing = "" if ok else f"; missing from {wanted[position]!r} on"
    return Outcome(ok, f"{direction} methods contain {wanted} in order{missing}", [", ".join(methods[:40])])


def messages(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"method", "dir", "count", "min", "max"}, "messages")
    pattern, direction = spec.get("method", "*"), spec.get("dir")
    count = sum(1 for d, m in facts.sequence if fnmatch.fnmatchcase(m, pattern) and direction in (None, d))
    if "method" not in spec:
        counts = facts.report.messages
        count = {"c2s": counts.c2s, "s2c": counts.s2c}.get(direction, 0) if direction else counts.total
    low = spec.get("count", spec.get("min", 0))
    high = spec.get("count", spec.get("max", float("inf")))
    what = f"{pattern} messages{f' ({direction})' if direction else ''}"
    return Outcome(low <= count <= high, f"{count} {what}, expected {low}..{high}")


def final_state(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"state", "task"}, "final_state")
    tasks = [t for t in facts.report.tasks if fnmatch.fnmatchcase(t.id, str(spec.get("task", "*")))]
    wrong = [t for t in tasks if t.final_state != spec.get("state")]
    evidence = [f"task {t.id}: {t.final_state}" for t in tasks]
    if not tasks:
        return Outcome(False, "no such task in the recording")
    return Outcome(
        not wrong, f"{len(tasks) - len(wrong)} of {plural(len(tasks), 'task')} ended {spec.get('state')}", evidence
    )


def latency(arg: Any, facts: Facts) -> Outcome:
    spec = _mapping(arg, {"method", "p50_ms_max", "p95_ms_max", "max_ms_max"}, "latency")
    rows = [r for r in facts.report.latency if fnmatch.fnmatchcase(r.method, str(spec.get("method", "*")))]
    failures = [
        f"{r.method} {key[:-4]} {getattr(r, key[:-4])} ms > {spec[key]} ms"
        for r in rows
        for key in ("p50_ms_max", "p95_ms_max", "max_ms_max")
        if key in spec and getattr(r, key[:-4]) > spec[key]
    ]
    evidence = [f"{r.method}: p50 {r.p50_ms} ms, p95 {r.p95_ms} ms, max {r.max_ms} ms" for r in rows]
    if not rows:
        return Outcome(False, f"no response to {spec.get('method', '*')} in the recording")
    return Outcome(not failures, "; ".join(failures) or "latency within bounds", evidence)


def _check_poll_interval(arg: Any) -> None:
    spec = _mapping(arg, {"within", "median_between", "every"}, "poll_interval")
    if "within" in spec:
        _tolerance(spec["within"])
    between = spec.get("median_between", [0, 0])
    if not (isinstance(between, list) and len(between) == 2 and all(isinstance(v, int | float) for v in between)):
        raise ValueError("'median_between' takes [low, high] in seconds")


def _check_number(name: str) -> Callable[[Any], None]:
    def validate(arg: Any) -> None:
        if isinstance(arg, bool) or not isinstance(arg, int | float):
            raise ValueError(f"'{name}' takes a number of seconds")

    return validate


def _check_mapping(name: str, allowed: set[str], required: str | None = None) -> Callable[[Any], None]:
    def validate(arg: Any) -> None:
        spec = _mapping(arg, allowed, name)
        if required is not None and required not in spec:
            raise ValueError(f"'{name}' needs '{required}'")
        for key in ("count", "min", "max", "min_count", "p50_ms_max", "p95_ms_max", "max_ms_max"):
            if key in spec and (isinstance(spec[key], bool) or not isinstance(spec[key], int | float)):
                raise ValueError(f"'{key}' takes a number")
        if "contains" in spec or "starts_with" in spec:
            listed = spec.get("contains", spec.get("starts_with"))
            if not isinstance(listed, list) or not all(isinstance(m, str) for m in listed):
                raise ValueError(f"'{name}' takes a list of method names")

    return validate


def _check_no_findings(arg: Any) -> None:
    if arg is True or arg is None:
        return
    spec = _mapping(arg, {"severity", "codes"}, "no_findings")
    if "severity" in spec and spec["severity"] not in SEVERITY_ORDER:
        raise ValueError(f"'severity' is one of {', '.join(SEVERITY_ORDER)}")


def _check_cancel(arg: Any) -> None:
    if arg not in ("sent", "not_sent", "no_live_tasks"):
        raise ValueError("'cancel_on_exit' is one of: sent, not_sent, no_live_tasks")


VALIDATORS: dict[str, Callable[[Any], None]] = {
    "poll_interval": _check_poll_interval,
    "cancel_on_exit": _check_cancel,
    "no_findings": _check_no_findings,
    "finding": _check_mapping("finding", {"code", "min_count"}, "code"),
    "max_elicitation_gap": _check_number("max_elicitation_gap"),
    "method_sequence": _check_mapping("method_sequence", {"contains", "starts_with", "dir"}),
    "messages": _check_mapping("messages", {"method", "dir", "count", "min", "max"}),
    "final_state": _check_mapping("final_state", {"state", "task"}, "state"),
    "latency": _check_mapping("latency", {"method", "p50_ms_max", "p95_ms_max", "max_ms_max"}),
}
"""Each check's argument validator: raises ValueError with a one-line reason."""

CHECKS: dict[str, Callable[[Any, Facts], Outcome]] = {
    "poll_interval": poll_interval,
    "cancel_on_exit": cancel_on_exit,
    "no_findings": no_findings,
    "finding": finding,
    "max_elicitation_gap": max_elicitation_gap,
    "method_sequence": method_sequence,
    "messages": messages,
    "final_state": final_state,
    "latency": latency,
}
