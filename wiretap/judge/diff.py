"""``wiretap diff A B``: two behaviour profiles compared section by section.

A and B are recordings or session folders (their servers paired by name). Ids, timestamps and
volatile values are no difference; the order of requests in flight together is none either, nor is
where a poll falls among the client's other requests (tasks run side by side, as a lab session's do,
interleave their polls as the clock has it): the polls are judged by their task's cadence. Tasks pair
by tool, the n-th call of a tool in A with the n-th in B. Delays and poll cadences differ only beyond a
tolerance, and latency is shown (never a difference by itself) only when both sides have enough
samples to mean something.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from wiretap.analysis.behaviour import Handshake, HttpTraits, Shutdown
from wiretap.analysis.profile import Profile, TaskTrait
from wiretap.judge.profiles import Source
from wiretap.wire.structural_diff import differences

CADENCE_TOLERANCE = 0.10
DELAY_TOLERANCE = (0.1, 0.5)
"""A shutdown delay differs when it moved by more than 100 ms and by more than half (a loaded machine alone
delays a process's exit by tens of ms)."""
MIN_LATENCY_SAMPLES = 20
ESCALATION = ("SIGINT", "SIGTERM", "SIGKILL")
"""The signals a client sends its server in turn while it has not gone."""
RACY = frozenset({"stdin closed", "connections closed"})
"""Steps a relay sees only if they come before it ends (a signal it always records)."""


@dataclass
class ServerDiff:
    name: str
    sections: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Shown, but not differences (latency)."""

    @property
    def differs(self) -> bool:
        return any(self.sections.values())


@dataclass
class Difference:
    a: str
    b: str
    servers: list[ServerDiff]
    unpaired: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.unpaired) or any(s.differs for s in self.servers)

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "differs": self.differs, **asdict(self)}


def _value(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value)) or "none"
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)


def _fields(a: Any, b: Any, names: tuple[str, ...], prefix: str = "") -> list[str]:
    return [
        f"{prefix}{name.replace('_', ' ')}: {_value(getattr(a, name))} → {_value(getattr(b, name))}"
        for name in names
        if getattr(a, name) != getattr(b, name)
    ]


def json_changes(a: Any, b: Any, what: str) -> list[str]:
    """A structural diff: ``capabilities.roots.listChanged: added true``."""
    lines = []
    for change in differences(a, b):
        shown = change.as_dict()
        where = f"{what}.{change.path}" if change.path else what
        if "recorded" not in shown:
            lines.append(f"{where}: added {json.dumps(shown['live'], sort_keys=True)}")
        elif "live" not in shown:
            lines.append(f"{where}: removed (was {json.dumps(shown['recorded'], sort_keys=True)})")
        else:
            before, after = (json.dumps(shown[side], sort_keys=True) for side in ("recorded", "live"))
            lines.append(f"{where}: {before} → {after}")
    return lines


def _handshake(a: Handshake, b: Handshake) -> list[str]:
    lines = _fields(a, b, ("method", "attempts", "protocol_version", "era", "client_name", "client_version"))
    lines += json_changes(a.capabilities or {}, b.capabilities or {}, "capabilities")
    for key in sorted(set(b.meta_keys) - set(a.meta_keys)):
        lines.append(f"_meta key added: {key}")
    for key in sorted(set(a.meta_keys) - set(b.meta_keys)):
        lines.append(f"_meta key removed: {key}")
    lines += _fields(a, b, ("meta_on", "id_types"))
    if a.key_order != b.key_order:
        lines.append(f"key order: {' | '.join(a.key_order) or 'n/a'} → {' | '.join(b.key_order) or 'n/a'}")
    return lines


def _sequence(a: Profile, b: Profile) -> list[str]:
    x, y = [s.label() for s in a.sequence], [s.label() for s in b.sequence]
    return [line.rstrip() for line in difflib.unified_diff(x, y, "A", "B", lineterm="", n=2)]


def _sets(a: tuple[Any, ...], b: tuple[Any, ...], show: Any) -> list[str]:
    return [f"+ {show(x)}" for x in b if x not in a] + [f"- {show(x)}" for x in a if x not in b]


def _by_tool(tasks: tuple[TaskTrait, ...]) -> dict[tuple[str, int], tuple[int, TaskTrait]]:
    """Each task by its tool and which call of that tool made it (the first, the second…), with its place."""
    seen: dict[str, int] = {}
    keyed: dict[tuple[str, int], tuple[int, TaskTrait]] = {}
    for n, task in enumerate(tasks, 1):
        tool = task.tool or task.design or "task"
        seen[tool] = seen.get(tool, 0) + 1
        keyed[(tool, seen[tool])] = (n, task)
    return keyed


def _task_name(n: int, tool: str, nth: int, calls: int) -> str:
    return f"task {n} ({tool}{f' #{nth}' if calls > 1 else ''})"


def _tasks(a: Profile, b: Profile) -> list[str]:
    lines = [f"tasks: {len(a.tasks)} → {len(b.tasks)}"] if len(a.tasks) != len(b.tasks) else []
    ka, kb = _by_tool(a.tasks), _by_tool(b.tasks)
    calls = {tool: max(nth for t, nth in (*ka, *kb) if t == tool) for tool, _ in (*ka, *kb)}
    for key in [k for k in ka if k not in kb] + [k for k in kb if k not in ka]:
        side, (n, _) = ("A", ka[key]) if key in ka else ("B", kb[key])
        lines.append(f"{_task_name(n, *key, calls[key[0]])}: only in {side}")
    for key, (n, x) in ka.items():
        if key not in kb:
            continue
        y = kb[key][1]
        name = f"{_task_name(n, *key, calls[key[0]])}: "
        lines += _fields(x, y, ("design", "requested_poll_ms", "final_state", "live_at_client_exit", "cancelled"), name)
        mx, my = x.settled_interval, y.settled_interval
        if (mx is None) != (my is None) or (mx and my and abs(my - mx) > CADENCE_TOLERANCE * mx):
            lines.append(f"{name}poll interval {mx} s → {my} s ({x.pattern} → {y.pattern})")
    return lines


def _questions(a: Profile, b: Profile) -> list[str]:
    lines = [f"questions: {len(a.questions)} → {len(b.questions)}"] if len(a.questions) != len(b.questions) else []
    for n, (x, y) in enumerate(zip(a.questions, b.questions, strict=False), 1):
        lines += _fields(x, y, ("kind", "keys", "answered_by", "cancelled_instead"), f"question {n}: ")
    return lines


def _cancel_on_exit(a: bool | None, b: bool | None) -> list[str]:
    """Sent, not sent (a task was live and the client left without cancelling it), or no live task."""
    said = {True: "sent", False: "not sent, with a live task", None: "no live task at exit"}
    return [] if a == b else [f"cancel on exit: {said[a]} → {said[b]}"]


def _http(a: HttpTraits | None, b: HttpTraits | None) -> list[str]:
    if a is None or b is None:
        return [] if a is b else [f"transport traits: {'HTTP' if a else 'none'} → {'HTTP' if b else 'none'}"]
    names = ("session_id", "get_stream", "delete_on_exit", "mcp_headers", "protocol_version_header", "methods")
    return _fields(a, b, names)


def _timed(shutdown: Shutdown) -> dict[str, float]:
    """Each step (a group split into its parts; a repeated one numbered) and when it came."""
    seen: dict[str, int] = {}
    timed: dict[str, float] = {}
    for step in shutdown.steps:
        for part in step.what.split(" + "):
            seen[part] = seen.get(part, 0) + 1
            timed[part if seen[part] == 1 else f"{part} #{seen[part]}"] = step.after
    return timed


def _apart(x: float, y: float) -> bool:
    floor, share = DELAY_TOLERANCE
    return abs(x - y) > max(floor, share * max(x, y))


def _drop_unneeded_escalation(mine: dict[str, float], theirs: dict[str, float]) -> None:
    """A client escalates while its server is still running (Claude Code: SIGINT, then SIGTERM 100 ms later,
    then SIGKILL), so a stronger signal shows only when the server, or the tap before it on a loaded machine,
    was slow to go. A stronger signal that ``mine`` has and ``theirs`` has not, after the same first signal,
    is no difference in behaviour: ``theirs`` ended on that first signal alone. The timing of such signals
    is no help: a tap held up by a loaded machine records both at once, in either order."""
    first_mine, first_theirs = next(iter(mine), None), next(iter(theirs), None)
    if first_mine is None or first_mine != first_theirs or first_mine not in ESCALATION:
        return
    if not any(step.startswith("server ") for step in theirs):
        return
    stronger = ESCALATION[ESCALATION.index(first_mine) + 1 :]
    if any(step in theirs for step in stronger):
        return
    for step in [s for s in mine if s in stronger]:
        del mine[step]


def _shutdown(a: Shutdown, b: Shutdown) -> list[str]:
    """The same steps in the same order, each at about the same delay. Steps that came within the delay
    tolerance of each other may swap, and one that came as the server ended may be missing on one
    side: which reached the tap first, or at all, is a race, not a behaviour."""
    ta, tb = _timed(a), _timed(b)
    for mine, theirs in ((ta, tb), (tb, ta)):
        # What the client did as its server was ending may or may not reach the tap before the tap ends.
        end = next((t for step, t in mine.items() if step.startswith("server ")), None)
        late = [
            s for s in mine if s in RACY and s not in theirs and end is not None and mine[s] >= end - DELAY_TOLERANCE[0]
        ]
        for step in late:
            del mine[step]
    _drop_unneeded_escalation(ta, tb)
    _drop_unneeded_escalation(tb, ta)
    swapped = set(ta) == set(tb) and any(
        (ta[x] - ta[y]) * (tb[x] - tb[y]) < 0 and (_apart(ta[x], ta[y]) or _apart(tb[x], tb[y])) for x in ta for y in ta
    )
    if set(ta) != set(tb) or swapped:
        lines = [f"order: {_value(a.order) or 'nothing'} → {_value(b.order) or 'nothing'}"]
    else:
        lines = [
            f"{step}: {ta[step] * 1000:.0f} ms → {tb[step] * 1000:.0f} ms after the first step"
            for step in ta
            if _apart(ta[step], tb[step])
        ]
    return lines + _fields(a, b, ("server", "recording_complete", "orphaned"))


def _latency(a: Profile, b: Profile) -> list[str]:
    before = {row.method: row for row in a.latency}
    lines = []
    for row in b.latency:
        old = before.get(row.method)
        if old is None or old.p50_ms <= 0:
            continue
        if min(old.count, row.count) < MIN_LATENCY_SAMPLES:
            continue
        ratio = row.p50_ms / old.p50_ms
        lines.append(f"{row.method}: p50 {old.p50_ms} → {row.p50_ms} ms ({ratio:.2f}×, n={old.count}/{row.count})")
    return lines


def diff_profiles(name: str, a: Profile, b: Profile) -> ServerDiff:
    return ServerDiff(
        name,
        sections={
            "handshake": _handshake(a.handshake, b.handshake),
            "method sequence": _sequence(a, b),
            "server-initiated requests": _sets(
                a.server_requests, b.server_requests, lambda r: f"{r.method}: {r.answer}"
            ),
            "tasks": _tasks(a, b),
            "questions": _questions(a, b),
            "cancel on exit": _cancel_on_exit(a.cancel_on_exit, b.cancel_on_exit),
            "HTTP transport": _http(a.http, b.http),
            "shutdown": _shutdown(a.shutdown, b.shutdown),
            "findings": _sets(a.findings, b.findings, str),
        },
        notes={"latency": _latency(a, b)},
    )


def _pairs(a: Source, b: Source) -> tuple[list[tuple[str, Profile, Profile]], list[str]]:
    if len(a.profiles) == 1 and len(b.profiles) == 1:
        (na, pa), (nb, pb) = next(iter(a.profiles.items())), next(iter(b.profiles.items()))
        return [(na if na == nb else f"{na} / {nb}", pa, pb)], []
    pairs = [(name, a.profiles[name], b.profiles[name]) for name in a.profiles if name in b.profiles]
    unpaired = [f"{name}: only in A" for name in a.profiles if name not in b.profiles]
    unpaired += [f"{name}: only in B" for name in b.profiles if name not in a.profiles]
    return pairs, unpaired


def diff(a: Source, b: Source) -> Difference:
    pairs, unpaired = _pairs(a, b)
    return Difference(str(a.path), str(b.path), [diff_profiles(name, x, y) for name, x, y in pairs], unpaired)
