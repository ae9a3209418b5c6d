"""Task polls answered by the live client's clock, not one recorded poll after another.

A poll at live time ``T`` gets the task's recorded state at the same offset since the task was
created (scaled by the pace), answered with a recorded poll response that reported that state. The
recorded clock stops where the recorded client acted on the task (answered its question, cancelled it)
until the live client does the same; from then on it runs from the recorded moment of that action. A
client that polls faster, slower or never at all then sees what it would have seen from the server.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from wiretap.analysis.states import State
from wiretap.analysis.task import Task
from wiretap.replay.pace import Pace
from wiretap.replay.script import Exchange, Json

BEFORE = 1e-6
"""The clock stops this much before a recorded client action: the state just before it."""


def reported_state(response: Json | None) -> str | None:
    """The state a poll response reports: MCP ``status``, A2A ``status.state``."""
    if response is None:
        return None
    result = response.get("result", response)
    if not isinstance(result, dict):
        return None
    status = result.get("status")
    if isinstance(status, str):
        return status
    if isinstance(status, dict) and isinstance(status.get("state"), str):
        return str(status["state"])
    return None


def with_state(response: Json, state: str) -> Json:
    patched = copy.deepcopy(response)
    result = patched.get("result", patched)
    if isinstance(result, dict):
        if isinstance(result.get("status"), dict):
            result["status"]["state"] = state
        else:
            result["status"] = state
    return patched


@dataclass(frozen=True)
class PollAnswer:
    exchange: Exchange
    """The recorded poll whose steps answer the live one."""
    state: State | None
    recorded_t: float
    """The recorded time the live poll stands for."""
    response: Json | None
    """The response to send (the recorded one, or one patched to the state at ``recorded_t``)."""


class TaskClock:
    def __init__(self, task: Task, polls: list[Exchange], pace: Pace) -> None:
        self.task = task
        self.polls = polls
        self.pace = pace
        self.actions = sorted(t for t, via in [*task.answers, *task.cancels] if via != "notifications/cancelled")
        """When the recorded client acted on the task; the clock waits at each for the live client."""
        self.acted = 0
        self.anchor_recorded = task.created_at
        self.anchor_live: float | None = None

    def created(self, now: float) -> None:
        if self.anchor_live is None:
            self.anchor_live = now

    def client_acted(self, now: float) -> None:
        if self.acted < len(self.actions):
            self.anchor_recorded, self.anchor_live = self.actions[self.acted], now
        self.acted += 1

    def recorded_now(self, now: float) -> float:
        self.created(now)
        assert self.anchor_live is not None
        limit = self.actions[self.acted] - BEFORE if self.acted < len(self.actions) else math.inf
        elapsed = self.pace.recorded(now - self.anchor_live)
        target = min(self.anchor_recorded + elapsed, limit)
        if math.isinf(target):  # as fast as possible, and nothing left for the client to do: the end
            return self.task.states[-1][0] if self.task.states else self.task.created_at
        return target

    def state_at(self, t: float) -> State | None:
        states = self.task.states
        if not states:
            return None
        current = states[0][1]
        for at, state in states:
            if at > t:
                break
            current = state
        return current

    def poll(self, now: float, polls: list[Exchange] | None = None) -> PollAnswer:
        """Which recorded poll (of ``polls``, by default all of the task's) answers a live poll at ``now``."""
        target = self.recorded_now(now)
        state = self.state_at(target)
        polls = polls or self.polls
        answered = [p for p in polls if p.response is not None and "error" not in p.response]
        pool = answered or polls
        same = [p for p in pool if state is not None and reported_state(p.response) == state.raw]

        def nearness(p: Exchange) -> tuple[bool, float]:
            at = p.response_t if p.response_t is not None else p.t
            return (at > target, abs(at - target))

        chosen = min(same or pool, key=nearness)
        response = chosen.response
        if response is not None and state is not None and not same and answered:
            response = with_state(response, state.raw)
        return PollAnswer(chosen, state, target, response)
