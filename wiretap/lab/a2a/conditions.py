"""The A2A conditions a message can ask for, and how a message names one.

A message picks its condition with ``metadata`` (``{"condition": "slow", "seconds": 2}``) or with its
text: the condition's name first, then its arguments (``slow 2``, ``silent 60 after 1``). The agent
card's skills say the same to a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from wiretap.wire.json_values import as_dict


@dataclass(frozen=True)
class Skill:
    id: str
    name: str
    description: str
    example: str


SKILLS = (
    Skill(
        "slow",
        "Slow task",
        "Works for SECONDS (default 3), then completes with a text artifact. Send the text 'slow SECONDS' "
        '(or metadata {"condition": "slow", "seconds": N}). A blocking send is answered when it completes.',
        "slow 5",
    ),
    Skill(
        "silent",
        "Silent worker",
        "Accepts the task (working), answers GetTask at once for AFTER seconds (default 0), then leaves every "
        "GetTask unanswered until SECONDS (default 60) more have passed: a client's poll timeout and its "
        "give-up rule show. Send 'silent SECONDS after AFTER' (metadata: seconds, after).",
        "silent 120 after 1",
    ),
    Skill(
        "reject",
        "Rejected task",
        "Ends the task at once in TASK_STATE_REJECTED with a status message giving the reason. Send 'reject' "
        "followed by any reason.",
        "reject this agent does not book flights",
    ),
    Skill(
        "failing-artifact",
        "Completed with a failing result",
        "Completes the task (TASK_STATE_COMPLETED) with an artifact summary.json whose data says "
        '{"tests": 4, "passed": 3, "failed": 1}: the state says success, the result says failure. '
        "Send 'failing-artifact'.",
        "failing-artifact",
    ),
    Skill(
        "input-required",
        "Input required",
        "Stops the task in TASK_STATE_INPUT_REQUIRED with a question; any follow-up message on the same task "
        "(message.taskId) completes it. Send 'input-required'.",
        "input-required",
    ),
    Skill(
        "auth-required",
        "Authorization required",
        "Stops the task in TASK_STATE_AUTH_REQUIRED with a status message; any follow-up message on the same "
        "task completes it. Send 'auth-required'.",
        "auth-required",
    ),
    Skill(
        "crash",
        "Crash mid-task",
        "Accepts the task (working), then after SECONDS (default 2) the agent process exits at once, status 1, "
        "answering nothing more. Send 'crash SECONDS'.",
        "crash 2",
    ),
    Skill(
        "done",
        "Already done",
        "Completes at once. Messaging the finished task answers -32004 (unsupported operation: terminal), "
        "cancelling it -32002 (not cancelable), an unknown id -32001 (task not found). Send 'done'.",
        "done",
    ),
)
NAMES = {skill.id for skill in SKILLS}
DEFAULT = "slow"


@dataclass(frozen=True)
class Condition:
    name: str
    seconds: float = 0.0
    after: float = 0.0
    reason: str = ""


_DEFAULT_SECONDS = {"slow": 3.0, "silent": 60.0, "crash": 2.0}
_NUMBER = re.compile(r"^\d+(\.\d+)?$")


def condition_of(message: dict[str, Any]) -> Condition:
    """The condition a message asks for: its metadata first, else its text; ``slow`` when it names none."""
    metadata = as_dict(message.get("metadata"))
    name = str(metadata.get("condition") or metadata.get("skill") or "")
    text = " ".join(_texts(message)).strip()
    words = text.split()
    if name not in NAMES:
        name = words[0].lower() if words and words[0].lower() in NAMES else DEFAULT
        words = words[1:] if words and words[0].lower() == name else words
    else:
        words = []
    numbers = [float(w) for w in words if _NUMBER.match(w)]
    seconds = _number(metadata.get("seconds"), numbers[0] if numbers else _DEFAULT_SECONDS.get(name, 0.0))
    after = _number(metadata.get("after"), _after(words))
    reason = " ".join(words) if name == "reject" else ""
    return Condition(name, seconds, after, reason or ("" if name != "reject" else "the agent declines this task"))


def _after(words: list[str]) -> float:
    for here, word in enumerate(words[:-1]):
        if word.lower() == "after" and _NUMBER.match(words[here + 1]):
            return float(words[here + 1])
    return 0.0


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else default


def _texts(message: dict[str, Any]) -> list[str]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return []
    return [str(part["text"]) for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]
