"""Making a recording or a session safe to attach or commit: secrets redacted again (even in a
``--no-redact`` recording), and the machine it was made on (home, working directory, interpreter,
user and host names) replaced by placeholders. Times, sizes and the order of events are kept, so a
report of the scrubbed copy says what the report of the original says."""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiretap.files import private_dirs, write_private
from wiretap.recording.complete import await_end, say_if_incomplete
from wiretap.recording.writer import encode_event
from wiretap.wire.redact import Redactor

GENERIC_USERS = frozenset({"root", "user", "admin", "runner", "ubuntu", "nobody", "ci"})
"""Account names that say nothing about whose machine it was (and are common words)."""
_HOME_LIKE = re.compile(r"(?<![\w.~-])(?:/home/|/Users/)[A-Za-z0-9._-]+|(?<![\w.~-])/root(?=/|\b)")
_INTERPRETER = re.compile(r"(?<![\w~-])(?:/[^\s\"'/]+)+/(python[0-9.]*|node|bun|deno)(?![\w.-])")
_DROPPED = "[dropped by wiretap scrub]"


def machine_names() -> dict[str, str]:
    """This machine's identifiers and their placeholders (paths longest first when applied)."""
    names: dict[str, str] = {}
    for path in (sys.executable, os.path.realpath(sys.executable)):
        names[path] = Path(path).name
    names[os.getcwd()] = "<cwd>"
    home = os.path.expanduser("~")
    if home not in ("/", ""):
        names[home] = "~"
    return names


def machine_words() -> dict[str, str]:
    words: dict[str, str] = {}
    user = getpass.getuser()
    if user.lower() not in GENERIC_USERS and len(user) >= 2:
        words[user] = "<user>"
    for host in {socket.gethostname(), socket.getfqdn()}:
        if host and host.lower() not in ("localhost", "localhost.localdomain") and len(host) >= 2:
            words[host] = "<host>"
    return words


@dataclass
class Scrubber:
    paths: dict[str, str] = field(default_factory=machine_names)
    words: dict[str, str] = field(default_factory=machine_words)
    drop_stderr: bool = False
    drop_bodies: frozenset[str] = frozenset()
    redactor: Redactor = field(default_factory=Redactor)
    _dropped_ids: set[tuple[str, str]] = field(default_factory=set)

    def learn(self, header: dict[str, Any]) -> None:
        """Where the recording was made: its working directory is a machine name too."""
        cwd = header.get("cwd")
        if isinstance(cwd, str) and cwd not in ("/", ""):
            self.paths.setdefault(cwd, "<cwd>")

    def text(self, text: str) -> str:
        text = _INTERPRETER.sub(lambda m: m.group(1), self.redactor.string(text)[0])
        for path in sorted(self.paths, key=len, reverse=True):
            if path in text:
                text = text.replace(path, self.paths[path])
        text = _HOME_LIKE.sub("~", text)
        for word, placeholder in self.words.items():
            if word in text:
                text = re.sub(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", placeholder, text)
        return text

    def value(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            return self.text(self.redactor.string(value, under=key)[0])
        if isinstance(value, list):
            if key in ("argv", "client_argv") and all(isinstance(v, str) for v in value):
                return [self.text(v) for v in self.redactor.argv(value)]
            return [self.value(v, key) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        return value

    def event(self, event: dict[str, Any]) -> dict[str, Any] | None:
        kind = event.get("kind")
        if kind == "header":
            self.learn(event)
            return {**self.value(event), "redacted": True}
        if kind == "stderr" and self.drop_stderr:
            return None
        if kind == "message" and isinstance(event.get("msg"), dict) and self.drop_bodies:
            event = {**event, "msg": self._drop_body(str(event.get("dir")), event["msg"])}
        return dict(self.value(event))

    def _drop_body(self, direction: str, msg: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(msg.get("id"))
        if msg.get("method") in self.drop_bodies:
            if "id" in msg:
                self._dropped_ids.add((direction, key))
            return {k: (_DROPPED if k == "params" else v) for k, v in msg.items()}
        answered = ("s2c" if direction == "c2s" else "c2s", key)
        if "method" not in msg and answered in self._dropped_ids:
            self._dropped_ids.discard(answered)
            return {k: (_DROPPED if k in ("result", "error") else v) for k, v in msg.items()}
        return msg

    def lines(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        """A recording's lines, scrubbed; a line that is not JSON (cut short by a crash) stays one."""
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                text = line.decode("utf-8", errors="replace")
                yield self.text(text.rstrip("\n")).encode() + (b"\n" if text.endswith("\n") else b"")
                continue
            scrubbed = self.event(event) if isinstance(event, dict) else None
            if scrubbed == event:
                yield line  # untouched: kept byte for byte (a message as it was sent)
            elif scrubbed is not None:
                yield bytes(encode_event(scrubbed)[0])


def scrub_recording(
    source: Path, target: Path, scrubber: Scrubber, advance: Callable[[int], None] | None = None
) -> None:
    """``advance`` is told how many bytes of ``source`` each line was (for a progress bar)."""
    completion = await_end(source)
    with source.open("rb") as f:
        if not _is_header(f.readline()):
            raise NotARecording("not a wiretap recording (no header line)")
        say_if_incomplete(completion)
        f.seek(0)
        lines: Iterable[bytes] = f if advance is None else _counted(f, advance)
        write_private(target, b"".join(scrubber.lines(lines)))


class NotARecording(ValueError):
    pass


def _is_header(line: bytes) -> bool:
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("kind") == "header"


def _counted(lines: Iterable[bytes], advance: Callable[[int], None]) -> Iterator[bytes]:
    for line in lines:
        advance(len(line))
        yield line


def scrub_session(
    source: Path, target: Path, scrubber: Scrubber, advance: Callable[[int], None] | None = None
) -> list[Path]:
    """Every recording, the manifest and the proxy logs of a session folder, scrubbed into ``target``."""
    private_dirs(target)
    written: list[Path] = []
    for path in sorted(source.iterdir()):
        out = target / path.name
        if path.suffix == ".jsonl":
            scrub_recording(path, out, scrubber, advance)
        elif path.suffix == ".json":
            document = json.loads(path.read_text(encoding="utf-8"))
            scrubber.learn(document)
            write_private(out, json.dumps(scrubber.value(document), indent=2, ensure_ascii=False) + "\n")
        elif path.suffix == ".log":
            text = path.read_text(encoding="utf-8", errors="replace")
            write_private(out, "".join(scrubber.text(line) for line in text.splitlines(keepends=True)))
        else:
            continue
        written.append(out)
    return written
