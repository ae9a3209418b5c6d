"""Task states alone: the one reconstruction the report's analyses make, without the rest of the report.

The replay needs the tasks a recording holds, not its findings, traffic figures or observations, and
running the whole report for them would be most of a large replay's start.
"""

from __future__ import annotations

from wiretap.analysis.conversation import Conversation, Message
from wiretap.analysis.findings import Findings
from wiretap.analysis.task import Task
from wiretap.analysis.tasks import TaskTracker
from wiretap.recording.events import Event


class _StatesOnly(TaskTracker):
    def _repeated_call(self, m: Message) -> None:
        """A repeated call is a finding, never a task state: nobody here reads findings."""


class TaskPass:
    """Feeds events through the conversation to the task tracker, as ``Analysis`` does."""

    def __init__(self) -> None:
        self._conversation = Conversation()
        self._tracker = _StatesOnly(Findings())
        self._end_t = 0.0

    def feed(self, event: Event) -> None:
        self._end_t = max(self._end_t, float(event.get("t", 0.0)))
        for item in self._conversation.feed(event):
            if isinstance(item, Message):
                self._tracker.feed(item)

    def finish(self) -> dict[str, Task]:
        self._tracker.finish(self._end_t)
        return dict(self._tracker.tasks)
