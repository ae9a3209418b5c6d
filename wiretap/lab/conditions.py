"""The lab's conditions: each one a tool of the probe server, with its arguments, defaults and the
description that tells a model exactly how to call it. The shared contract of ``wiretap lab``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from wiretap.analysis.model import ToolCall
from wiretap.errors import BadInput
from wiretap.wire.json_values import as_dict

LAB_META = "wiretap/lab"
"""The ``_meta`` key under which the server states the condition and its settings on the wire."""


class Kind(StrEnum):
    TASK = "task"
    """Answered as a task to a client that declares tasks support, inline to one that does not."""
    INLINE = "inline"
    """Always answered inline."""


@dataclass(frozen=True)
class Argument:
    name: str
    type: str
    """``integer`` or ``number``."""
    description: str
    default: float | None
    minimum: float
    maximum: float

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type, "description": self.description}
        schema.update(minimum=self.minimum, maximum=self.maximum)
        if self.default is not None:
            schema["default"] = self.default
        return schema


@dataclass(frozen=True)
class Condition:
    name: str
    tool: str
    kind: Kind
    question: str
    """What an investigator learns from it."""
    description: str
    arguments: tuple[Argument, ...]

    def input_schema(self) -> dict[str, Any]:
        properties = {a.name: a.schema() for a in self.arguments}
        return {"type": "object", "properties": properties, "additionalProperties": False}

    def defaults(self) -> dict[str, float | None]:
        return {a.name: a.default for a in self.arguments}

    def settings(self, given: Mapping[str, Any]) -> dict[str, float | None]:
        """The arguments a call gave, checked, with the defaults filled in; BadInput names the bad one."""
        known = {a.name: a for a in self.arguments}
        if unknown := sorted(set(given) - set(known)):
            raise BadInput(f"{self.tool}: unknown argument {unknown[0]!r} (arguments: {', '.join(known)})")
        settings = self.defaults()
        for name, value in given.items():
            arg = known[name]
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if not numeric or (arg.type == "integer" and value != int(value)):
                raise BadInput(f"{self.tool}: {name} must be an {arg.type}, not {value!r}")
            if not arg.minimum <= value <= arg.maximum:
                raise BadInput(f"{self.tool}: {name} must be {arg.minimum:g}..{arg.maximum:g}, not {value!r}")
            settings[name] = value
        return settings


def _interval(default: float | None) -> Argument:
    return Argument(
        "interval_ms",
        "integer",
        "The poll interval the task asks for, in ms (pollIntervalMs / pollInterval).",
        default,
        1,
        600_000,
    )


def _seconds(name: str, description: str, default: float) -> Argument:
    return Argument(name, "number", description, default, 0, 3600)


CONDITIONS: tuple[Condition, ...] = (
    Condition(
        "poll-interval",
        "poll_task",
        Kind.TASK,
        "Does the client poll at the interval asked; what are its clamp and its default?",
        "Starts a task that works for `seconds` s, then completes. It asks to be polled every `interval_ms` ms; "
        'leave interval_ms out to ask for no interval. Call it once, e.g. {"interval_ms": 1000, "seconds": 5}, '
        "and wait for its result.",
        (_interval(None), _seconds("seconds", "How long the task works before it completes.", 6)),
    ),
    Condition(
        "input-required",
        "input_task",
        Kind.TASK,
        "Does the client stop polling while a form is open, and answer with one tasks/update?",
        "Starts a task that, after `after_s` s, needs input: a form with two fields and a roots/list request. "
        'Once both are answered it completes. Call it once, e.g. {"after_s": 1}, and answer the form.',
        (_interval(500), _seconds("after_s", "Seconds of work before the task asks.", 1)),
    ),
    Condition(
        "forgotten-task",
        "forgotten_task",
        Kind.TASK,
        "How long does the client keep asking for a task id the server has forgotten?",
        "Starts a task whose id the server forgets after `forget_after_s` s: later polls get -32602 "
        '"Task not found". Call it once, e.g. {"forget_after_s": 3}, and wait.',
        (_interval(500), _seconds("forget_after_s", "Seconds until the server forgets the task.", 3)),
    ),
    Condition(
        "failing-polls",
        "failing_polls_task",
        Kind.TASK,
        "Does the client retry polls that fail, and when does it give up?",
        "Starts a task whose first `failures` polls fail with -32603, then it completes after `seconds` s. "
        'Call it once, e.g. {"failures": 3}, and wait for its result.',
        (
            _interval(500),
            Argument("failures", "integer", "How many polls fail before they succeed.", 3, 0, 1000),
            _seconds("seconds", "How long the task works before it completes.", 3),
        ),
    ),
    Condition(
        "until-cancelled",
        "endless_task",
        Kind.TASK,
        "Does the client cancel a live task on exit, or when stopped (TaskStop)?",
        "Starts a task that works until it is cancelled. Call it once with {} and leave it running; "
        "stop it or exit when told.",
        (_interval(1000),),
    ),
    Condition(
        "progress",
        "progress_call",
        Kind.INLINE,
        "Does the client show progress notifications, and do they reset its timeout?",
        "Answers inline after sending `count` progress notifications, one every `every_s` s (when the call "
        'carries a progressToken). Call it once, e.g. {"count": 5, "every_s": 0.5}.',
        (
            Argument("count", "integer", "How many progress notifications.", 5, 0, 10_000),
            _seconds("every_s", "Seconds between notifications.", 0.5),
        ),
    ),
    Condition(
        "slow-answer",
        "slow_call",
        Kind.INLINE,
        "How long does the client wait for an inline answer (idle and request timeouts)?",
        'Answers inline after `seconds` s, with nothing sent before. Call it once, e.g. {"seconds": 5}.',
        (_seconds("seconds", "Seconds before the answer.", 5),),
    ),
)

BY_TOOL = {c.tool: c for c in CONDITIONS}
BY_NAME = {c.name: c for c in CONDITIONS}


def parse_conditions(text: str | None) -> list[Condition] | None:
    """``--conditions a,b``: the named conditions (names or tool names); None for all. BadInput names a bad one."""
    if text is None:
        return None
    chosen = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        found = BY_NAME.get(word) or BY_TOOL.get(word)
        if found is None:
            known = ", ".join(c.name for c in CONDITIONS)
            raise BadInput(f"--conditions {word!r}: not a lab condition (conditions: {known})")
        if found not in chosen:
            chosen.append(found)
    if not chosen:
        raise BadInput("--conditions: name at least one condition")
    return chosen


def lab_meta(call: ToolCall) -> dict[str, Any]:
    found = call.meta.get(LAB_META)
    return as_dict(found)


def condition_of(call: ToolCall) -> Condition | None:
    """The condition the server says it ran (``_meta["wiretap/lab"]``), else the one its tool is."""
    said = lab_meta(call).get("condition")
    if isinstance(said, str) and (found := BY_NAME.get(said) or BY_TOOL.get(said)) is not None:
        return found
    return BY_TOOL.get(call.tool)


def settings_of(call: ToolCall, condition: Condition) -> dict[str, Any]:
    """The settings the server states on the wire; else the call's arguments with the defaults filled in."""
    said = lab_meta(call).get("settings")
    if isinstance(said, dict):
        return dict(said)
    try:
        return dict(condition.settings(call.arguments))
    except BadInput:
        return dict(call.arguments)
