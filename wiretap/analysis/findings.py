"""Protocol findings: each with a code, a severity, the times of the messages involved and advice.

Why one module: it is the catalogue of everything wiretap can say about a recording (codes, severities,
wording, advice), read and kept consistent in one place; the rules that notice each case live with the
passes that feed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from wiretap.plural import plural

if TYPE_CHECKING:
    from wiretap.analysis.conversation import Message
    from wiretap.analysis.limits import ClientLimit
    from wiretap.analysis.model import HeaderMismatch
    from wiretap.analysis.states import State
    from wiretap.wire.versions import ProtocolVersion

ERROR, WARNING, INFO = "error", "warning", "info"
HEADER_MISMATCH_CODE = -32020
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


class Task(Protocol):
    """What a finding reads of a task (``analysis.task.Task``), so findings stay a leaf."""

    @property
    def id(self) -> str: ...

    @property
    def state(self) -> State | None: ...

    @property
    def not_found_at(self) -> float | None: ...


@dataclass
class Finding:
    code: str
    severity: str
    message: str
    advice: str
    times: list[float] = field(default_factory=list)
    task: str | None = None
    count: int = 1
    header: HeaderMismatch | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "advice": self.advice,
            "times": [round(t, 3) for t in self.times],
            "task": self.task,
            "count": self.count,
            **({"header": self.header} if self.header is not None else {}),
        }


def _tag(task: Task | None) -> str:
    return f"task {task.id}" if task is not None else "a task"


class Findings:
    """Collects findings; repeated ones (a poll loop) aggregate into one with a count and first/last time."""

    def __init__(self) -> None:
        self._items: list[Finding] = []
        self._by_key: dict[tuple[str, str], Finding] = {}

    def _add(self, key: str | None, finding: Finding) -> None:
        if key is not None:
            if self._again(finding.code, key, finding.times[-1]):
                return
            self._by_key[(finding.code, key)] = finding
        self._items.append(finding)

    def _again(self, code: str, key: str, t: float) -> bool:
        """Counts a finding already made (a poll loop), without building it again."""
        existing = self._by_key.get((code, key))
        if existing is None:
            return False
        existing.count += 1
        existing.times[1:] = [t]
        return True

    def all(self) -> list[Finding]:
        return sorted(self._items, key=lambda f: (SEVERITY_ORDER[f.severity], f.times[0] if f.times else 0.0))

    def poll_after_terminal(self, task: Task, t: float) -> None:
        if self._again("poll-after-terminal", task.id, t):
            return
        state = task.state.raw if task.state else "?"
        self._add(
            task.id,
            Finding(
                "poll-after-terminal",
                ERROR,
                f"{_tag(task)} was polled after it reached the terminal state {state}",
                "Stop polling once a task is completed, failed, cancelled or rejected: the state will not change.",
                [t],
                task.id,
            ),
        )

    def unknown_state(self, task: Task, t: float, raw: str) -> None:
        self._add(
            f"{task.id}:{raw}",
            Finding(
                "unknown-task-state",
                WARNING,
                f"{_tag(task)} reported the state {raw!r}, which its protocol does not define",
                "Use the states the protocol defines; a client cannot tell whether to keep polling an unknown state.",
                [t],
                task.id,
            ),
        )

    def mixed_a2a_spelling(self, task: Task, m: Message, raw: str) -> None:
        self._add(
            f"{task.id}:{raw}",
            Finding(
                "a2a-0.3-state-in-1.0",
                WARNING,
                f"{_tag(task)} reported the A2A 0.3 state {raw!r} inside an A2A 1.0 exchange",
                "A 1.0 exchange uses TASK_STATE_* names; 1.0 clients may not recognise 0.3 lower-case states.",
                [m.t],
                task.id,
            ),
        )

    def task_rejected(self, task: Task, t: float, reason: str) -> None:
        said = f": {reason!r}" if reason else " with no status message saying why"
        self._add(
            task.id,
            Finding(
                "task-rejected",
                WARNING,
                f"{_tag(task)} was rejected (TASK_STATE_REJECTED){said}",
                "The agent declined the work: a client should report the reason and not wait, retry or poll it.",
                [t],
                task.id,
            ),
        )

    def completed_with_failure(self, task: Task, t: float, artifact: str, said: str) -> None:
        self._add(
            task.id,
            Finding(
                "completed-with-failing-artifact",
                WARNING,
                f"{_tag(task)} completed, but its artifact {artifact} reports failure ({said})",
                "The state says success and the result says failure: a client should read the artifact, not only "
                "the state, before reporting the task done.",
                [t],
                task.id,
            ),
        )

    def request_to_terminal(self, task: Task | None, request: Message, response: Message) -> None:
        got = f"error {response.error_code}" if response.error is not None else "a success"
        self._add(
            None,
            Finding(
                "request-to-terminal-task",
                WARNING,
                f"{request.method} was sent to {_tag(task)} after it had ended, and got {got}",
                "Check its state before messaging, subscribing to or cancelling a task: a finished task takes nothing.",
                [request.t, response.t],
                task.id if task else None,
            ),
        )

    def task_without_support(self, task: Task, request: Message, response: Message) -> None:
        self._add(
            None,
            Finding(
                "task-without-client-support",
                ERROR,
                f"{_tag(task)} was returned for {request.method} to a client that did not ask for or declare tasks",
                "Return a task handle only to a client that asked for one (params.task) or declared the extension.",
                [request.t, response.t],
                task.id,
            ),
        )

    def polled_unknown_task(self, task: Task, t: float) -> None:
        self._add(
            task.id,
            Finding(
                "polling-unknown-task",
                ERROR,
                f"the server no longer knows {_tag(task)}, and the client kept polling it",
                "Treat 'task not found' (-32602, -32001, HTTP 404) as final and stop polling.",
                [task.not_found_at or t, t],
                task.id,
            ),
        )

    def polled_unseen_task(self, task_id: str, request: Message, response: Message) -> None:
        self._add(
            f"unseen:{task_id}",
            Finding(
                "poll-for-unknown-task",
                WARNING,
                f"{request.method} asked for task {task_id}, which the recording never shows being created, "
                f"and got error {response.error_code}",
                "Poll only the ids a server returned; a task id from another session or server is not known here.",
                [request.t, response.t],
                task_id,
            ),
        )

    def duplicate_after_unknown_outcome(self, first: Message, repeat: Message) -> None:
        name = repeat.params.get("name")
        self._add(
            None,
            Finding(
                "repeated-after-unknown-outcome",
                WARNING,
                f"tools/call {name} was sent again with the same arguments while the outcome of the first was unknown",
                "The first call may have done the work: make the tool idempotent or check before repeating it.",
                [first.t, repeat.t],
            ),
        )

    def slow_poll(self, task: Task, asked: float, answered: float | None) -> None:
        how = f"answered after {answered - asked:.2f} s" if answered is not None else "never answered"
        self._add(
            None,
            Finding(
                "slow-poll",
                WARNING,
                f"a poll of {_tag(task)} was {how} (over 15 s)",
                "Answer tasks/get and GetTask at once; a poll is a state read, not a wait.",
                [asked] + ([answered] if answered is not None else []),
                task.id,
            ),
        )

    def failed_poll_run(self, task: Task, first: float, last: float) -> None:
        self._add(
            task.id,
            Finding(
                "failed-poll-run",
                WARNING,
                f"consecutive polls of {_tag(task)} failed",
                "Back off or give up after repeated poll errors instead of polling at full rate.",
                [first, last],
                task.id,
            ),
        )

    def unanswered(self, request: Message) -> None:
        self._add(
            None,
            Finding(
                "unanswered-request",
                WARNING,
                f"{request.method} #{request.id} never got a response",
                "Every request needs a response; a client waiting on it may hang or time out.",
                [request.t],
            ),
        )

    def recording_capped(self, since: float, max_size: str, messages: int | None) -> None:
        counted = plural(messages, "message") if messages is not None else "the messages"
        self._add(
            None,
            Finding(
                "recording-capped",
                WARNING,
                f"the recording reached its size cap (--max-size {max_size}) at {since:.2f} s: {counted} after "
                "that passed whole but were not stored",
                "What happened after the cap is not in this report: later polls, answers, task states and "
                "connections are missing, so a task may look unfinished that was not. Record again with a "
                "larger --max-size (or unlimited).",
                [since],
            ),
        )

    def client_gave_up(self, request: Message, t: float, how: str) -> None:
        self._add(
            None,
            Finding(
                "client-gave-up",
                WARNING,
                f"the client gave up on {_call(request)} {t - request.t:.2f} s after sending it: {how}",
                "Answer within the client's limit, send progress while working, or return a task the client "
                "can poll; stop the work once the client has given up.",
                [request.t, t],
            ),
        )

    def answer_after_give_up(self, request: Message, gave_up: float, answered: float) -> None:
        self._add(
            None,
            Finding(
                "answer-after-give-up",
                WARNING,
                f"the answer to {_call(request)} came {answered - gave_up:.2f} s after the client had given up "
                f"on it: the client never used it",
                "The work was done and its result lost: answer within the client's limit or return a task; "
                "after notifications/cancelled, send no response.",
                [request.t, gave_up, answered],
            ),
        )

    def idle_timeout_risk(
        self, request: Message, start: float, end: float, limit: float, row: ClientLimit, *, answered: bool
    ) -> None:
        until = "until its answer" if answered else "with no answer"
        self._add(
            None,
            Finding(
                "idle-timeout-risk",
                WARNING,
                f"{_call(request)} went {end - start:.2f} s without a response or progress notification {until}, "
                f"past {row.client}'s idle limit of {limit:g} s over {row.transport} ({row.setting})",
                "Send notifications/progress with the call's progressToken while the tool works, or return a "
                "task: the client aborts a call silent for longer than its idle limit.",
                [start, end],
            ),
        )

    def stdout_not_json(self, severity: str, message: str, times: list[float], count: int) -> None:
        finding = Finding(
            "stdout-not-json",
            severity,
            message,
            "Write only JSON-RPC messages to stdout and send logs to stderr: many clients drop the "
            "connection at the first line on stdout that is not JSON-RPC.",
            times,
        )
        finding.count = count
        self._add(None, finding)

    def slow_start(self, severity: str, message: str, times: list[float]) -> None:
        self._add(
            None,
            Finding(
                "slow-start",
                severity,
                message,
                "Answer the handshake first and do slow set-up (downloads, indexes, connections) afterwards, "
                "or raise the client's startup limit.",
                times,
            ),
        )

    def start_failed(self, message: str, times: list[float], stderr: list[str]) -> None:
        said = f"; its last stderr lines: {' | '.join(stderr)}" if stderr else "; it wrote nothing on stderr"
        self._add(
            None,
            Finding(
                "start-failed",
                ERROR,
                message + said,
                "Run the server's command by hand to see it start; its stderr says why it stopped. If it is only "
                "slow, answer the handshake sooner or raise the client's startup limit.",
                times,
            ),
        )

    def header_body_mismatch(self, found: HeaderMismatch) -> None:
        answered = found.status_at if found.status is not None else found.error_at
        self._add(
            f"{found.header}:{found.sent}:{found.field}:{found.body}",
            Finding(
                "header-body-mismatch",
                ERROR,
                f"{found.method} #{found.id}: {_header_said(found)}, the body's {found.field} is {found.body!r}; "
                f"{_answer(found)}",
                "Mirror the body exactly: Mcp-Method = method, Mcp-Name = params.name or params.uri "
                "(=?base64?…?= of its UTF-8 bytes, padded, when not plain ASCII), MCP-Protocol-Version = the "
                "_meta version; a 2026-07-28 server answers a mismatch with 400 and -32020.",
                [found.t] + ([answered] if answered is not None else []),
                header=found,
            ),
        )

    def unknown_protocol_version(self, version: ProtocolVersion, t: float, where: str) -> None:
        self._add(
            f"{version.text}",
            Finding(
                "unknown-protocol-version",
                INFO,
                f"the protocol version {version.describe()} was sent in {where}",
                "Use a published revision (2024-11-05 … 2026-07-28): a server that does not know a version "
                "rejects it, and wiretap cannot tell which era's rules apply.",
                [t],
            ),
        )


def _call(request: Message) -> str:
    """``tools/call #5 (slow)``."""
    name = request.params.get("name") if request.method == "tools/call" else None
    return f"{request.method} #{request.id}" + (f" ({name})" if isinstance(name, str) else "")


def _header_said(found: HeaderMismatch) -> str:
    if found.sent is None:
        return f"{found.header} is missing"
    if found.decoded is None:
        return f"{found.header} {found.sent!r} cannot be decoded ({found.problem})"
    said = f"{found.header} {found.sent!r}" + (f" decodes to {found.decoded!r}" if found.sent != found.decoded else "")
    if found.decoded == found.body:
        return f"{said} only when read leniently ({found.problem})"
    return said + (f" ({found.problem})" if found.problem else "")


def _answer(found: HeaderMismatch) -> str:
    code = f" with error {found.error_code}" if found.error_code is not None else ""
    status = f" HTTP {found.status}" if found.status is not None else ""
    if not code and not status:
        return "no answer was recorded"
    rejected = (found.status or 0) >= 400 or found.error_code == HEADER_MISMATCH_CODE
    return f"the server {'rejected it:' if rejected else 'answered'}{status}{code}"


def never_contacted(server: str, transport: str, started: bool) -> Finding:
    """A server the client was configured with that it never spoke to in the session (one per server)."""
    how = "its proxy ran, but the client sent it nothing" if started else "the client never started it"
    advice = (
        "The client had this server and did not use it: look for it in the client's own MCP list (a failed "
        "connection, a server it skipped or never contacts, such as an http server it silently ignores) "
        "before blaming the server."
    )
    return Finding(
        "never-contacted", WARNING, f"{server} ({transport}) was configured but never contacted: {how}", advice
    )
