"""The investigation of a lab session as a typed model: a row per condition the client ran, and the
questions investigators ask, answered for the client that ran. ``lab.investigation`` builds it from the
report; every renderer (text, Markdown, HTML) reads it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Row:
    condition: str
    """A lab condition's name, or what a non-lab task shows (``polling``, ``open form``…)."""
    tool: str | None
    asked: str
    """What the server asked for: the settings on the wire (``_meta["wiretap/lab"]``) and the task's fields."""
    did: str
    verdict: str
    evidence: list[float] = field(default_factory=list)
    """Seconds (the session's clock) of the messages that show it."""
    agrees: bool | None = None
    """Whether what the client did is what its known rule says; None when no rule of this client applies."""
    task: str | None = None
    server: str | None = None


@dataclass
class Answer:
    question: str
    rule: str | None
    """The rule known for the client that ran (its own only); None when none is known."""
    seen: str
    """What this session shows; ``not exercised`` when no condition tested it."""
    agrees: bool | None = None


@dataclass
class Investigation:
    source: str
    name: str | None
    client: str | None
    """As a person names it (``Claude Code``), else its ``clientInfo`` name."""
    client_version: str | None
    poll_rule: str
    rows: list[Row]
    answers: list[Answer]
    not_run: list[str] = field(default_factory=list)
    """Conditions asked for that the session never called."""
    calls_left_out: int = 0
