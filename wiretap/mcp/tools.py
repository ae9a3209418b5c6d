"""The tools ``wiretap mcp`` offers: reading sessions and recordings, never starting or changing anything.

Each tool takes the arguments its schema names and returns one JSON object under ``budget.CAP``.
Paths are checked by ``roots.Roots``; wiretap's own errors (not a recording, no such server) come back
as tool errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wiretap.analysis.model import Report
from wiretap.errors import BadInput, user_error
from wiretap.mcp import budget
from wiretap.mcp.arguments import check
from wiretap.mcp.protocol import Tool, ToolError
from wiretap.mcp.reading import Reading, located_rows, row_json, rows_of, unredacted
from wiretap.mcp.roots import Roots
from wiretap.recording.folders import SessionFolder, is_session, one_recording, open_session
from wiretap.recording.reader import open_recording
from wiretap.render.filters import RowFilter
from wiretap.wire.json_values import as_dict
from wiretap.wire.redact import redact_json

Json = dict[str, Any]
REPORT_SECTIONS = ("summary", "findings", "tasks", "questions", "latency")
_NOTES = 10

_PATH = {"type": "string", "description": "A session folder or a recording, as list_sessions/list_recordings give it."}
_SERVER = {"type": "string", "description": "Only this server's recording of a session."}
_METHOD = {
    "type": ["string", "array"],
    "items": {"type": "string"},
    "description": "JSON-RPC method, or a list; glob patterns (tools/*). A response matches by its request's method.",
}
_DIRECTION = {"type": "string", "enum": ["in", "out"], "description": "in: to the server; out: from it."}
_SECTION = {"type": "string", "enum": list(REPORT_SECTIONS), "description": "What of the report (default summary)."}
_TEXT = {"type": "string", "description": "Case-insensitive text anywhere in the row or its message."}


def _schema(properties: Json, required: tuple[str, ...] = (), paged: bool = True) -> Json:
    schema: Json = {
        "type": "object",
        "properties": {**properties, **(budget.PAGING_SCHEMA if paged else {})},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


class Tools:
    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    def all(self) -> list[Tool]:
        return [
            self._tool(
                "list_sessions",
                "Sessions recorded by `wiretap -- CLIENT`, newest first: when, the client, how it ended, "
                "each server with its transport, message count and recordings.",
                _schema({}),
                self.list_sessions,
            ),
            self._tool(
                "list_recordings",
                "Recordings that are not part of a session (wiretap tap/proxy), by path: server name, "
                "transport, start, size.",
                _schema({}),
                self.list_recordings,
            ),
            self._tool(
                "timeline",
                "The messages of a session (all servers on the client's clock, t = 0 at its start) or of a "
                "recording, as timeline rows: time, lane (IN to the server, OUT from it, --- lifecycle, ERR "
                "stderr), method, a summary, latency of answers, and the recording line to fetch whole with "
                "get_message. Filter by server, method, direction, time range (seconds) or text.",
                _schema(
                    {
                        "path": _PATH,
                        "server": _SERVER,
                        "method": _METHOD,
                        "direction": _DIRECTION,
                        "since": {"type": "number", "description": "Rows at or after this time (seconds)."},
                        "until": {"type": "number", "description": "Rows at or before this time (seconds)."},
                        "text": _TEXT,
                    },
                    ("path",),
                ),
                self.timeline,
            ),
            self._tool(
                "report",
                "wiretap's report of a session or recording. section=summary (default): message counts, "
                "verdicts (cancel on exit, polling, questions, shutdown), exits, and how many findings, "
                "tasks, open questions and latency rows there are; section=findings|tasks|questions|latency: "
                "those, paged.",
                _schema({"path": _PATH, "server": _SERVER, "section": _SECTION}, ("path",)),
                self.report,
            ),
            self._tool(
                "get_message",
                "One recorded event whole (a message with its JSON-RPC body, or a lifecycle event), by its "
                "recording and line (as timeline and search give them) or its 0-based event index. Strings "
                f"over {budget.WHOLE_STRING_LIMIT} characters are clipped, saying their length.",
                _schema(
                    {
                        "recording": {"type": "string", "description": "A recording file (not a session folder)."},
                        "line": {"type": "integer", "minimum": 2, "description": "Its line in the recording."},
                        "index": {"type": "integer", "minimum": 0, "description": "Or its event index."},
                    },
                    ("recording",),
                    paged=False,
                ),
                self.get_message,
            ),
            self._tool(
                "search",
                "Rows matching text and/or a method across every recording wiretap mcp can read (or those of "
                "one session or recording with path); times are on each recording's own clock.",
                _schema({"text": _TEXT, "method": _METHOD, "direction": _DIRECTION, "path": _PATH}),
                self.search,
            ),
            self._tool(
                "diff",
                "Compare two sessions or recordings by behaviour (`wiretap diff`): handshake, sequence, tasks, "
                "questions, cancel on exit, HTTP transport, shutdown, findings; servers paired by name. "
                "Ids and timestamps are no difference. The differences come paged.",
                _schema({"a": _PATH, "b": _PATH}, ("a", "b")),
                self.diff,
            ),
        ]

    @staticmethod
    def _tool(name: str, description: str, schema: Json, call: Callable[[Json], Json]) -> Tool:
        def guarded(arguments: Json) -> Json:
            try:
                return call(check(arguments, schema))
            except (BadInput, OSError) as exc:
                known = user_error(exc)
                raise ToolError(known[0] if known else str(exc)) from None

        return Tool(name, description, schema, guarded)

    # Sessions and recordings.

    def list_sessions(self, arguments: Json) -> Json:
        window = budget.Window(*budget.paging(arguments))
        window.extend(self._session_json(s) for s in self.roots.sessions())
        return window.page({"roots": [self.roots.shown(p) for p in self.roots.folders]}, "sessions")

    def _session_json(self, session: SessionFolder) -> Json:
        m = session.manifest
        exit_ = m.get("exit") or {}
        info = m.get("client_info") or {}
        client = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else m.get("client")
        files: dict[str, list[str]] = {}
        for server, file in session.recordings:
            files.setdefault(str(server.get("name")), []).append(self.roots.shown(file))
        servers = [
            {
                "name": s.get("name"),
                "transport": s.get("transport"),
                "messages": s.get("messages"),
                "recordings": files.get(str(s.get("name")), []),
            }
            for s in m.get("servers", [])
        ]
        status = "running" if m.get("running") else exit_.get("signal") or f"exit {exit_.get('code', '?')}"
        item: Json = {"path": self.roots.shown(session.path), "started": m.get("started"), "client": client}
        item |= {"status": status, "servers": servers}
        if m.get("not_wrapped"):
            item["not_wrapped"] = m["not_wrapped"]
        return budget.clip_object(item)

    def list_recordings(self, arguments: Json) -> Json:
        window = budget.Window(*budget.paging(arguments))
        window.extend(self.roots.loose_recordings())
        window.items = [self._recording_json(path) for path in window.items]
        return window.page({"roots": [self.roots.shown(p) for p in self.roots.folders]}, "recordings")

    def _recording_json(self, path: Path) -> Json:
        header = _header(path)
        item: Json = {"path": self.roots.shown(path), "size_bytes": path.stat().st_size}
        for key in ("name", "transport", "started", "redacted"):
            if key in header:
                item[key] = header[key]
        return budget.clip_object(item)

    # Reading the wire.

    def timeline(self, arguments: Json) -> Json:
        path = self.roots.resolve(arguments["path"])
        keep = _filter(arguments)
        window = budget.Window(*budget.paging(arguments))
        reading = Reading()
        with rows_of(path, arguments.get("server"), reading) as rows:
            for located in rows:
                if keep(located.row):
                    window.add(located)
        window.items = [budget.clip(row_json(r, self.roots.shown(r.recording))) for r in window.items]
        clock = "the session's: 0 = the client's start" if path.is_dir() else "the recording's: 0 = its start"
        head = {"path": self.roots.shown(path), "clock": clock, **self._said(reading)}
        return window.page(head, "rows")

    def get_message(self, arguments: Json) -> Json:
        line, index = arguments.get("line"), arguments.get("index")
        if (line is None) == (index is None):
            raise ToolError("give line or index (one of them)")
        path = one_recording(self.roots.resolve(arguments["recording"]))
        reading = Reading()
        with open_recording(path, wait=0) as reader:
            server = str(reader.header.get("name", ""))
            last = None
            for located in located_rows(reader, reading, server):
                last = located
                if located.line != line and located.index != index:
                    continue
                event = located.row.event
                result = {
                    "recording": self.roots.shown(path),
                    "server": server,
                    "line": located.line,
                    "index": located.index,
                    "row": budget.clip(row_json(located, self.roots.shown(path))),
                    "event_bytes": budget.size(event),
                    "event": budget.clip(event, budget.WHOLE_STRING_LIMIT),
                    **self._said(reading),
                }
                return budget.fit(result)
        where = f"line {line}" if line is not None else f"index {index}"
        has = f"lines 2–{last.line}, indexes 0–{last.index}" if last else "no events"
        raise ToolError(f"{arguments['recording']}: no event at {where} (it has {has})")

    def search(self, arguments: Json) -> Json:
        if not arguments.get("text") and not arguments.get("method"):
            raise ToolError("give text or method (or both) to search for")
        keep = _filter(arguments)
        window = budget.Window(*budget.paging(arguments))
        reading = Reading()
        sources = self._sources(arguments.get("path"))
        for session, path in sources:
            with open_recording(path, wait=0) as reader:
                for located in located_rows(reader, reading, str(reader.header.get("name", ""))):
                    if keep(located.row):
                        item = row_json(located, self.roots.shown(path))
                        if session is not None:
                            item["session"] = self.roots.shown(session)
                        window.add(item)
        window.items = [budget.clip(item) for item in window.items]
        return window.page({"recordings_searched": len(sources), **self._said(reading)}, "matches")

    def _sources(self, given: str | None) -> list[tuple[Path | None, Path]]:
        """(session folder or None, recording) pairs to search: everything, or what ``given`` names."""
        if given is not None:
            path = self.roots.resolve(given)
            if not path.is_dir():
                return [(None, path)]
            sessions = [open_session(path) if is_session(path) else _not_a_session(path)]
        else:
            sessions = self.roots.sessions()
        found: list[tuple[Path | None, Path]] = [
            (s.path, file) for s in sessions for _, file in s.recordings if file.exists()
        ]
        if given is None:
            found += [(None, path) for path in self.roots.loose_recordings()]
        return found

    # Judgements.

    def report(self, arguments: Json) -> Json:
        path = self.roots.resolve(arguments["path"])
        section = arguments.get("section") or "summary"
        report = _build_report(path, arguments.get("server"))
        document = report.to_dict()
        unsafe = [p for p in _recordings_behind(path) if unredacted(_header(p))]
        if unsafe:
            document = redact_json(document)[0]
        head: Json = {"path": self.roots.shown(path), "section": section}
        if unsafe:
            head["redaction"] = _redaction_note(self.roots, unsafe)
        if section == "summary":
            keys = ("servers", "recording", "messages", "verdicts", "client_exit", "server_exit", "poll_rule")
            summary = {key: document.get(key) for key in keys}
            counts = {key: len(document[key]) for key in REPORT_SECTIONS[1:]}
            findings = [
                {"index": i, "code": f["code"], "severity": f["severity"], "server": f.get("server")}
                for i, f in enumerate(document["findings"][:50])
            ]
            return budget.fit({**head, **budget.clip(summary), "counts": counts, "findings": findings})
        window = budget.Window(*budget.paging(arguments))
        window.extend(budget.clip({"index": i, **item}) for i, item in enumerate(document[section]))
        return window.page(head, section)

    def diff(self, arguments: Json) -> Json:
        from wiretap.judge.diff import diff
        from wiretap.judge.profiles import load

        a, b = self.roots.resolve(arguments["a"]), self.roots.resolve(arguments["b"])
        result = diff(load(a), load(b))
        changes = [
            {"server": s.name, "section": section, "change": line}
            for s in result.servers
            for section, lines in s.sections.items()
            for line in lines
        ]
        notes = [
            {"server": s.name, "section": section, "note": line}
            for s in result.servers
            for section, lines in s.notes.items()
            for line in lines
        ]
        unsafe = [p for p in (*_recordings_behind(a), *_recordings_behind(b)) if unredacted(_header(p))]
        head: Json = {
            "a": self.roots.shown(a),
            "b": self.roots.shown(b),
            "differs": result.differs,
            "servers": [s.name for s in result.servers],
            "unpaired": result.unpaired,
            "notes": notes[:_NOTES],
        }
        window = budget.Window(*budget.paging(arguments))
        window.extend(budget.clip(change) for change in changes)
        if unsafe:
            head = redact_json(head)[0] | {"redaction": _redaction_note(self.roots, unsafe)}
            window.items = [redact_json(item)[0] for item in window.items]
        return window.page(budget.clip(head), "differences")

    def _said(self, reading: Reading) -> Json:
        said: Json = {}
        if reading.redacted_here:
            said["redaction"] = _redaction_note(self.roots, reading.redacted_here)
        if reading.notes:
            said["notes"] = budget.clip(reading.notes[:_NOTES], 300)
        return said


def _filter(arguments: Json) -> RowFilter:
    method = arguments.get("method")
    methods = (method,) if isinstance(method, str) else tuple(method or ())
    return RowFilter(
        methods=methods,
        direction=arguments.get("direction"),
        text=arguments.get("text") or None,
        since=arguments.get("since"),
        until=arguments.get("until"),
    )


def _build_report(path: Path, server: str | None) -> Report:
    if path.is_dir():
        from wiretap.analysis.session_report import build_session_report

        if not is_session(path):
            _not_a_session(path)
        return build_session_report(path, server=server)
    from wiretap.analysis.report import build_report

    report = build_report(path, wait=0)
    name = report.recording.name
    if server is not None and server != name:
        raise ToolError(f"{path.name}: a recording of {name!r}, not of {server!r}")
    return report


def _recordings_behind(path: Path) -> list[Path]:
    if path.is_dir():
        return [file for _, file in open_session(path).recordings if file.exists()] if is_session(path) else []
    return [path]


def _header(path: Path) -> Json:
    try:
        with path.open("rb") as file:
            header = json.loads(file.readline(1 << 20))
    except (OSError, ValueError):
        return {}
    return as_dict(header)


def _not_a_session(path: Path) -> SessionFolder:
    raise ToolError(f"{path.name}: a folder, but not a wiretap session (no manifest.json)")


def _redaction_note(roots: Roots, paths: list[Path]) -> str:
    names = ", ".join(sorted({roots.shown(p) for p in paths}))
    return f"recorded with --no-redact ({names}): credentials were redacted by wiretap mcp before answering"
