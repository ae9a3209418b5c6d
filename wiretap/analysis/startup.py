"""How a server started: from its spawn (or the first connection) to the answer of the handshake, against
the limit of the client that ran; whether it died or the client left first; and what its stdout carried
that is not JSON-RPC (a banner before the handshake, noise later).

The handshake is answered by the first response to ``initialize``, or the first successful response to
``server/discover``; a recording with neither request counts the first response to any request.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wiretap.analysis.conversation import REQUEST, RESPONSE, Message
from wiretap.analysis.findings import ERROR, INFO, WARNING, Findings
from wiretap.analysis.limits import WRAPPED_CLIENTS, Limit, limit_for
from wiretap.recording.events import Direction, Event, Kind
from wiretap.wire.jsonrpc import is_message

HANDSHAKE = ("initialize", "server/discover")
C2S, S2C = Direction.C2S.value, Direction.S2C.value
UNKNOWN_LIMIT_AFTER = 5.0
"""Seconds: a start this slow is noted (as info) even when the client's limit is not known."""
CLOSE_TO_LIMIT = 0.5
"""A start that takes this share of the client's limit is a warning: a slower machine or a cold cache
crosses it."""
FIRST_BYTES = 60
STDERR_LINES = 3
STDERR_KEPT = 50
"""Stderr lines kept until the handshake is answered (the last ``STDERR_LINES`` before a failure are shown)."""
MODERN_CLIENT = "io.modelcontextprotocol/clientInfo"
CLIENT_NAMES = {info: name for name, info in WRAPPED_CLIENTS.items()}


@dataclass
class Noise:
    """Lines on a stdio server's stdout that are not JSON-RPC messages, in one phase of the session."""

    first_t: float
    first: str
    size: int
    cut: bool
    """The line had no newline: the last bytes of a stream."""
    last_t: float = 0.0
    count: int = 0
    next_action: tuple[float, str, bool] | None = None
    """What the client did first after the first of these lines: when, what, and whether it was leaving."""


@dataclass
class Left:
    t: float | None
    """None when the recording does not say (the tap was killed)."""
    how: str


def _text(event: Event) -> str | None:
    """The frame as text when it is not a JSON-RPC message (a blank line is not counted), else None."""
    if "raw" in event:
        raw = str(event.get("raw", ""))
        return raw if raw.strip() else None
    body = event.get("msg")
    if is_message(body):
        return None
    items = body if isinstance(body, list) else [body]
    if items and all(is_message(item) for item in items):
        return None
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _first_bytes(text: str) -> str:
    return repr(text[:FIRST_BYTES] + ("…" if len(text) > FIRST_BYTES else ""))


@dataclass
class Startup:
    transport: str = "stdio"
    started_at: float | None = None
    spawn_failed: str | None = None
    first_request: Message | None = None
    handshake: Message | None = None
    answered: Message | None = None
    server_exit: tuple[float, str] | None = None
    left: Left | None = None
    client: tuple[str | None, str | None] = (None, None)
    stderr: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=STDERR_KEPT))
    banner: Noise | None = None
    noise: Noise | None = None
    tap_killed: bool = False
    stdout_closed: float | None = None
    """When the server closed its stdout: its end, as the client sees it (the exit is recorded after)."""
    last_t: float = 0.0

    def feed(self, event: Event) -> None:
        kind, t = event.get("kind"), float(event.get("t", 0.0))
        if kind != Kind.END:
            self.last_t = t
        if (kind == Kind.SPAWN and self.started_at is None) or (
            kind in (Kind.CONNECTION, Kind.HTTP_REQUEST) and self.started_at is None
        ):
            self.started_at = t
        elif kind == Kind.SPAWN_FAILED:
            self.spawn_failed = str(event.get("error") or "the server could not be started")
            self.started_at = t if self.started_at is None else self.started_at
        elif kind == Kind.STDERR and self.answered is None:
            self.stderr.append((t, str(event.get("text", ""))))
        elif kind == Kind.EXIT and self.server_exit is None:
            how = f"was killed by {event['signal']}" if "signal" in event else f"exited with code {event.get('code')}"
            self.server_exit = (t, how)
        elif kind == Kind.EOF and event.get("dir") == Direction.S2C and self.stdout_closed is None:
            self.stdout_closed = t
        elif kind == Kind.EOF and event.get("dir") == Direction.C2S:
            self._client_left(t, "closed the server's stdin")
        elif kind == Kind.SIGNAL and "forwarded" in event:
            self._client_left(t, f"sent {event.get('signal')}")
        elif kind == Kind.END and event.get("ended") == "relay_died":
            self.tap_killed = True
            self._client_left(None, f"killed wiretap tap (after its last recorded event, at {self.last_t:.3f} s)")
        elif kind == Kind.MESSAGE and self.transport == "stdio" and event.get("dir") == Direction.S2C:
            self._stdout(event, t)

    def message_event(self, event: Event, t: float) -> None:
        """``feed`` for a message event."""
        self.last_t = t
        if self.transport == "stdio" and event.get("dir") == Direction.S2C:
            self._stdout(event, t)

    def message(self, m: Message) -> None:
        if m.dir == C2S and m.kind == REQUEST:
            self._request(m)
        elif self.answered is None and m.dir == S2C and m.kind == RESPONSE and m.request is not None:
            self._response(m)
        if m.dir == C2S and (self.banner is not None or self.noise is not None) and self._waiting_for_action(m.t):
            self._action(m.t, f"sent {m.method}" if m.method and m.kind != RESPONSE else "answered a request", False)

    def client_exited(self, t: float) -> None:
        """The client's exit from a session manifest (on the recording's clock)."""
        killed = f"killed wiretap tap (after its last recorded event, at {self.last_t:.3f} s) and exited"
        self._client_left(t, killed if self.tap_killed else "exited")

    def _request(self, m: Message) -> None:
        if self.first_request is not None and self.handshake is not None and m.method not in HANDSHAKE:
            return
        if self.first_request is None:
            self.first_request = m
            params = m.params.get("_meta", {}).get(MODERN_CLIENT) if isinstance(m.params.get("_meta"), dict) else None
            info = m.params.get("clientInfo") or params
            if isinstance(info, dict):
                self.client = (info.get("name"), info.get("version"))
        if m.method in HANDSHAKE and self.handshake is None:
            self.handshake = m
        if m.method == "initialize":
            self.handshake = m

    def _response(self, m: Message) -> None:
        if self.answered is not None or m.request is None:
            return
        method = m.request.method
        if (
            method == "initialize"
            or (method == "server/discover" and m.error is None)
            or (self.handshake is None and method not in HANDSHAKE)
        ):
            self.answered = m

    def _client_left(self, t: float | None, how: str) -> None:
        if self.left is None or self.left.t is None or (t is not None and t < self.left.t):
            self.left = Left(t, how)
        if t is not None:
            self._action(t, how, True)

    def _waiting_for_action(self, t: float) -> bool:
        return any(n is not None and n.next_action is None and t >= n.first_t for n in (self.banner, self.noise))

    def _action(self, t: float, what: str, leaving: bool) -> None:
        for noise in (self.banner, self.noise):
            if noise is not None and noise.next_action is None and t >= noise.first_t:
                noise.next_action = (t, what, leaving)

    def _stdout(self, event: Event, t: float) -> None:
        text = _text(event)
        if text is None:
            return
        before = self.answered is None
        noise = self.banner if before else self.noise
        if noise is None:
            noise = Noise(t, _first_bytes(text), int(event.get("size", len(text))), event.get("eol") == "")
            if before:
                self.banner = noise
            else:
                self.noise = noise
        noise.count += 1
        noise.last_t = t

    # -- findings

    def finish(self, findings: Findings, settings: Mapping[str, str], client: str | None) -> None:
        """Add the findings, once the whole recording was fed. ``client``: the session's, when the recording
        names none."""
        name, version = self.client
        name = name or client
        for phase, noise in (("banner", self.banner), ("later", self.noise)):
            if noise is not None:
                self._noise_finding(findings, phase, noise)
        if self.started_at is None:
            return
        limit = limit_for(name, Limit.STARTUP, transport=self.transport, version=version, settings=settings)
        said = _limit_text(name, limit, settings)
        if self._failed(findings, said):
            return
        if self.answered is not None:
            self._slow(findings, name, self.answered, limit, said)

    def _noise_finding(self, findings: Findings, phase: str, noise: Noise) -> None:
        lines = f"{noise.count} lines" if noise.count > 1 else "a line"
        when = "before answering the handshake (a banner)" if phase == "banner" else "after the handshake (noise)"
        cut = ", without a newline" if noise.cut else ""
        message = (
            f"the server wrote {lines} on stdout that {'are' if noise.count > 1 else 'is'} not JSON-RPC {when}: "
            f"first {noise.first} ({noise.size} bytes{cut}) at {noise.first_t:.3f} s"
        )
        reaction, gave_up = self._reaction(noise)
        message += f"; {reaction}"
        severity = ERROR if gave_up else WARNING
        times = [noise.first_t] + ([noise.last_t] if noise.count > 1 else [])
        if noise.next_action is not None:
            times.append(noise.next_action[0])
        findings.stdout_not_json(severity, message, sorted(times), noise.count)

    def _reaction(self, noise: Noise) -> tuple[str, bool]:
        """What the client did next, and whether the server failed it (the handshake never answered)."""
        after = noise.next_action
        left = after is not None and after[2]
        if after is None and self.left is not None:
            left, text = True, f"then the client {self.left.how}"
        elif after is None:
            text = "the client did nothing more in the recording"
        elif left:
            text = f"then the client {after[1]} at {after[0]:.3f} s"
        else:
            text = f"the client kept going ({after[1]} at {after[0]:.3f} s)"
        if noise is self.banner:
            if self.answered is not None:
                text += f"; the handshake was answered at {self.answered.t:.3f} s"
            else:
                text += "; the handshake was never answered"
                return text, True
        return text, False  # a client that leaves may have been done: only a handshake never answered is an error

    def _failed(self, findings: Findings, said: str) -> bool:
        """``start-failed``: the server could not start, died, or the client left before the handshake's answer."""
        started = self.started_at if self.started_at is not None else 0.0
        answer_t = self.answered.t if self.answered is not None else None
        asked = self.handshake or self.first_request
        what = f"{asked.method} (sent at {asked.t:.3f} s)" if asked is not None else "any request"
        if self.spawn_failed is not None:
            findings.start_failed(f"the server could not be started: {self.spawn_failed}", [started], self._stderr())
            return True
        if self.transport != "stdio":
            return False
        ends = [t for t in (self.stdout_closed, self.server_exit[0] if self.server_exit else None) if t is not None]
        exit_t = min(ends) if self.server_exit is not None else None
        left_t = self.left.t if self.left is not None else None
        died = exit_t is not None and (answer_t is None or exit_t < answer_t) and (left_t is None or exit_t <= left_t)
        if died and self.server_exit is not None:
            t, how = self.server_exit
            message = f"the server {how} {t - started:.3f} s after it was started, before it answered {what}"
            findings.start_failed(message, [started, t], self._stderr())  # its last words may be stamped after it
            return True
        gone_first = (
            self.left is not None
            and asked is not None
            and (answer_t is None or (left_t is not None and left_t < answer_t))
        )
        if gone_first and self.left is not None:
            when = f" at {left_t:.3f} s, {left_t - started:.3f} s after the start," if left_t is not None else ""
            answered = f"; the answer came at {answer_t:.3f} s, too late" if answer_t is not None else ""
            message = f"the client {self.left.how}{when} without an answer to {what}{answered}; {said}"
            times = [started] + ([left_t] if left_t is not None else []) + ([answer_t] if answer_t else [])
            findings.start_failed(message, sorted(times), self._stderr(left_t))
            return True
        return False

    def _slow(
        self, findings: Findings, name: str | None, answered: Message, limit: tuple[float, Any] | None, said: str
    ) -> None:
        started = self.started_at if self.started_at is not None else 0.0
        took = answered.t - started
        method = answered.request.method if answered.request is not None else "the first request"
        head = f"the server answered {method} {took:.3f} s after it was started"
        if limit is None:
            if took > UNKNOWN_LIMIT_AFTER:
                findings.slow_start(INFO, f"{head}; {said}", [started, answered.t])
            return
        seconds = limit[0]
        if took > seconds:
            findings.slow_start(ERROR, f"{head}, past {said}", [started, answered.t])
        elif took >= CLOSE_TO_LIMIT * seconds:
            findings.slow_start(WARNING, f"{head}: {took / seconds:.0%} of {said}", [started, answered.t])

    def _stderr(self, until: float | None = None) -> list[str]:
        return [text for t, text in self.stderr if until is None or t <= until][-STDERR_LINES:]


def _limit_text(name: str | None, limit: tuple[float, Any] | None, settings: Mapping[str, str]) -> str:
    if limit is None:
        return f"the startup limit of {name or 'this client'} is not known"
    seconds, row = limit
    value = settings.get(row.setting or "")
    source = f"{row.setting} = {value}" if value else f"the default; {row.setting} changes it"
    return f"{CLIENT_NAMES.get(row.client, row.client)}'s startup limit of {seconds:g} s ({source})"
