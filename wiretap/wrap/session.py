"""``wiretap -- CLIENT …``: run an MCP client with every server it uses tapped, into one session folder.

The client owns the terminal: wiretap prints nothing while it runs, passes stdin, stdout, stderr,
window size and exit status through untouched (the client inherits them), and only afterwards prints
a short summary. The user's own configuration files are never written; the generated config lives in
a private temporary file that is removed afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from wiretap.analysis.identity import client_identity
from wiretap.analysis.limits import limits_env, server_limits
from wiretap.errors import BadInput, ExitStatus
from wiretap.files import private_dirs, write_private
from wiretap.recording.cap import DEFAULT_MAX_SIZE
from wiretap.recording.complete import await_end, wait_released
from wiretap.recording.events import utc_iso_ms
from wiretap.recording.folders import DEFAULT_DIR, MANIFEST, recordings_of
from wiretap.recording.paths import safe_name, utc_stamp
from wiretap.wire.redact import redact_argv, redact_text
from wiretap.wrap.clients import client_for
from wiretap.wrap.clients.launch import Launch
from wiretap.wrap.clients.proxy_use import ProxyUse
from wiretap.wrap.clients.servers import Server
from wiretap.wrap.forward import origin_of, start_forward
from wiretap.wrap.sidecar import start_sidecar

PROXY_START_TIMEOUT = 20.0
WEBSOCKET_SCHEMES = {"ws": "http", "wss": "https"}
SETTLE_TIMEOUT = 10.0
RELEASE_TIMEOUT = 2.0
"""Seconds a recorder that has finished its file may take to exit before the session stops waiting."""


@dataclass
class Wrapped:
    server: Server
    recording: Path
    entry: dict[str, Any]
    """The entry that goes into the generated config."""
    proxy: subprocess.Popen[str] | None = None
    forward: bool = False
    """Reached through the session's forward proxy: the client keeps the entry as configured."""


def new_session_dir(out: Path | None, started: float) -> Path:
    """``out`` (or ``wiretap-sessions/<UTC time>``) if it is new or empty, else the first free ``NAME.1``,
    ``NAME.2``…: two runs never share a folder, so no run's manifest overwrites another's."""
    wanted = out if out is not None else DEFAULT_DIR / utc_stamp(started)
    if not wanted.name:  # ".", "..": a sibling needs a name
        wanted = Path(os.path.abspath(wanted))
    if wanted.exists() and not wanted.is_dir():
        raise BadInput(f"--out {wanted}: a file exists there; a session needs a folder")
    private_dirs(wanted.parent)
    candidate = wanted
    for n in range(1, 10_000):
        try:
            candidate.mkdir(mode=0o700)
            return candidate
        except FileExistsError:
            if candidate.is_dir() and not any(candidate.iterdir()):
                return candidate
        candidate = wanted.with_name(f"{wanted.name}.{n}")
    raise BadInput(f"--out {wanted}: too many sessions with this name")


def _unique_names(servers: list[Server]) -> dict[str, str]:
    names: dict[str, str] = {}
    for server in servers:
        base = safe_name(server.name)
        name, n = base, 1
        while name in names.values():
            n += 1
            name = f"{base}-{n}"
        names[server.name] = name
    return names


def recording_options(max_size: int) -> list[str]:
    """The session's recording settings, as options of each ``wiretap tap`` and ``wiretap proxy`` it starts
    (none for the defaults: the generated configs stay as short as they were)."""
    return [] if max_size == DEFAULT_MAX_SIZE else ["--max-size", str(max_size)]


def _tap_entry(server: Server, recording: Path, options: list[str]) -> dict[str, Any]:
    # From the entry as configured: the client expands ${VAR} in what we hand it, exactly once.
    entry = dict(server.raw or server.entry)
    command = [str(entry.pop("command", "")), *map(str, entry.pop("args", []) or [])]
    out = str(recording.resolve())
    tap = [sys.executable, "-m", "wiretap", "tap", "--out", out, "--name", server.name, *options, "--", *command]
    return {**entry, "type": "stdio", "command": tap[0], "args": tap[1:]}


def _start_proxy(server: Server, recording: Path, log: Path, options: list[str]) -> tuple[subprocess.Popen[str], str]:
    """A reverse proxy for the server; the URL the client is given instead of the server's. A WebSocket
    server's (``ws://``, ``wss://``) is reached over HTTP(S), its upgrade passed through."""
    url = str(server.entry.get("url", ""))
    scheme, sep, rest = url.partition("://")
    websocket = bool(sep) and scheme.lower() in WEBSOCKET_SCHEMES
    upstream = f"{WEBSOCKET_SCHEMES[scheme.lower()]}://{rest}" if websocket else url
    command = ["proxy", "--upstream", upstream, "--out", str(recording), "--name", server.name, *options]
    proc = start_sidecar(command, log)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        status = proc.wait(PROXY_START_TIMEOUT)
        raise ProxyNotStarted(f"the proxy for {server.name} did not start: {log.read_text().strip()}", status)
    return proc, ("ws://" + line.partition("://")[2]) if websocket else line


def wrap_servers(
    servers: list[Server],
    folder: Path,
    max_size: int = DEFAULT_MAX_SIZE,
    *,
    forward: ProxyUse | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[list[Wrapped], list[str], dict[str, str]]:
    """Each server wrapped; with ``forward`` (how the client uses a proxy), the HTTP ones through one
    forward proxy, whose variables for the client come back third."""
    names = _unique_names(servers)
    options = recording_options(max_size)
    wrapped: list[Wrapped] = []
    skipped: list[str] = []
    through_forward: dict[str, Server] = {}
    for server in servers:
        recording = folder / f"{names[server.name]}.jsonl"
        url = str(server.entry.get("url", ""))
        forwardable = forward is not None and server.transport in ("http", "sse") and origin_of(url) is not None
        if server.forward_only is not None and not forwardable:
            skipped.append(
                f"{server.name} ({server.scope}): {server.forward_only}; only the forward proxy records it with "
                "its entry as configured (not with --reverse)"
            )
        elif server.transport == "stdio":
            wrapped.append(Wrapped(server, recording, _tap_entry(server, recording, options)))
        elif forwardable:
            through_forward[names[server.name]] = server
            wrapped.append(Wrapped(server, recording, dict(server.raw or server.entry), forward=True))
        elif server.transport in ("http", "sse", "a2a", "ws") and server.entry.get("url"):
            proxy, url = _start_proxy(server, recording, folder / f"{names[server.name]}.proxy.log", options)
            entry = {**(server.raw or server.entry), "url": url}
            wrapped.append(Wrapped(server, recording, entry, proxy))
        else:
            skipped.append(
                f"{server.name} ({server.scope}): transport {server.transport!r} is not one wiretap can wrap; "
                "the client still has it, unrecorded"
            )
    client_env: dict[str, str] = {}
    if through_forward and forward is not None:
        proc, client_env = start_forward(
            through_forward, folder, options, os.environ if env is None else env, folder / "forward.proxy.log", forward
        )
        for one in wrapped:
            if one.forward:
                one.proxy = proc
    return wrapped, skipped, client_env


def _message_count(recording: Path) -> int:
    try:
        with recording.open("rb") as f:
            return sum(1 for line in f if b'"kind":"message"' in line)
    except OSError:
        return 0


def _recorded(server: dict[str, Any]) -> str:
    if not server["recordings"]:
        return "wrapped, never started"
    if not server["messages"]:
        return "wrapped, never contacted"
    return f"{server['messages']} messages"


class ProxyNotStarted(BadInput):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = (
            ExitStatus(status) if status in (ExitStatus.USAGE, ExitStatus.UNREADABLE) else ExitStatus.UNREADABLE
        )
        """The proxy's own status: its URL or its port was at fault."""


class ClientNotStarted(Exception):
    def __init__(self, command: str, error: OSError) -> None:
        super().__init__(f"cannot start {command!r}: {error.strerror or error}")
        self.status = 127 if isinstance(error, FileNotFoundError) else 126
        """What a shell would exit with."""


def _let_the_client_handle_it(signum: int, frame: object) -> None:
    """The terminal sent this to the whole foreground group: the client got it too and decides."""


class Session:
    def __init__(
        self,
        argv: list[str],
        *,
        out: Path | None,
        cwd: Path,
        env: Mapping[str, str],
        max_size: int = DEFAULT_MAX_SIZE,
        reverse: bool = False,
    ) -> None:
        self.max_size = max_size
        self.reverse = reverse
        self.env = env
        self.client = client_for(argv[0])
        self.cwd = cwd
        self.discovery = self.client.discover(argv, cwd, env)
        self.started = time.time()
        self.started_monotonic = time.monotonic()
        self.folder = new_session_dir(out, self.started)
        self.moved = out is not None and self.folder.resolve() != out.resolve()
        if self.moved:
            print(f"wiretap: {out} is not empty; recording this session in {self.folder}", file=sys.stderr)
        self.wrapped: list[Wrapped] = []
        self.client_env: dict[str, str] = {}
        """Set for the client under the user's environment and wiretap's own (``--otlp``'s telemetry)."""
        self.inherit_env = True
        """False: the client gets ``env`` (and what wiretap adds), nothing else of this process's environment."""
        self.stdin: Callable[[subprocess.Popen[bytes]], None] | None = None
        """When set, the client's stdin is a pipe this is called with (from a thread) once the client started."""
        self.skipped = list(self.discovery.skipped)
        # The environment is left out: it holds the user's keys, and the rules would miss an opaque one.
        self.manifest: dict[str, Any] = {
            "kind": "wiretap-session",
            "format": 1,
            "client": self.client.NAME,
            "client_argv": redact_argv(list(argv)),
            "cwd": redact_text(str(cwd))[0],
            "started": utc_iso_ms(self.started),
            "started_monotonic": round(self.started_monotonic, 6),
            "limits_env": limits_env(env),
        }

    def run(self, stderr: IO[str] = sys.stderr) -> int:
        launch: Launch | None = None
        try:
            forward = None if self.reverse else self.client.PROXY_USE
            self.wrapped, skipped, proxy_env = wrap_servers(
                self.discovery.servers, self.folder, self.max_size, forward=forward, env=self.env
            )
            self.skipped += skipped
            entries = {w.server.name: w.entry for w in self.wrapped if not w.forward}
            launch = self.client.launch(self.discovery, entries)
            self._write_manifest(running=True)
            returncode = self._run_client(launch.argv, {**self.client_env, **launch.env, **proxy_env})
        finally:
            self._stop_proxies()
            if launch is not None:
                launch.cleanup()
            self._identify_client()
            self._link_transcript()
            self._write_manifest(running=False)
        self._summary(stderr)
        return returncode

    def _run_client(self, argv: list[str], env: dict[str, str] | None = None) -> int:
        # Ctrl-C and Ctrl-\ reach the client from the terminal; we only pass on what is sent to us alone.
        # A no-op handler, not SIG_IGN: an ignored signal would stay ignored in the client.
        previous = {s: signal.signal(s, _let_the_client_handle_it) for s in (signal.SIGINT, signal.SIGQUIT)}
        client_started = time.monotonic()
        self.manifest["client_started"] = round(client_started - self.started_monotonic, 6)
        self.manifest["client_started_monotonic"] = round(client_started, 6)
        base = os.environ if self.inherit_env else self.env
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env={**base, **(env or {})} if env or not self.inherit_env else None,
                stdin=subprocess.PIPE if self.stdin is not None else None,
            )
        except OSError as exc:
            self.manifest["client_error"] = redact_text(str(exc))[0]
            raise ClientNotStarted(argv[0], exc) from exc
        self._write_manifest(running=True)  # the client's start: t = 0 for whoever follows the session
        if self.stdin is not None:
            threading.Thread(target=self.stdin, args=(proc,), name="client-stdin", daemon=True).start()
        forward = {s: signal.signal(s, lambda n, _f: proc.send_signal(n)) for s in (signal.SIGTERM, signal.SIGHUP)}
        try:
            returncode = proc.wait()
        finally:
            for signum, handler in {**previous, **forward}.items():
                signal.signal(signum, handler)
        exited = time.monotonic()
        self.manifest["client_exited"] = round(exited - self.started_monotonic, 6)
        self.manifest["client_exited_monotonic"] = round(exited, 6)
        self.manifest["exit"] = (
            {"code": returncode} if returncode >= 0 else {"signal": signal.Signals(-returncode).name}
        )
        return returncode

    def _stop_proxies(self) -> None:
        for wrapped in self.wrapped:
            if wrapped.proxy is not None and wrapped.proxy.poll() is None:
                wrapped.proxy.send_signal(signal.SIGINT)
                if wrapped.forward:
                    wrapped.proxy.wait(10)  # (shared: stopped once, before the others are waited for)
        for wrapped in self.wrapped:
            if wrapped.proxy is not None:
                try:
                    wrapped.proxy.wait(10)
                except subprocess.TimeoutExpired:
                    wrapped.proxy.kill()
                    wrapped.proxy.wait()
                if wrapped.proxy.stdout is not None:
                    wrapped.proxy.stdout.close()

    def _identify_client(self) -> None:
        """The client's name and version as its handshake gave them (what the user ran, not what we guess)."""
        for wrapped in self.wrapped:
            for recording in recordings_of(wrapped.recording):
                if (identity := client_identity(recording)) is not None:
                    self.manifest["client_info"] = identity
                    return

    def _link_transcript(self) -> None:
        """Claude Code's transcript of this session, found by a tool call's toolUseId (read-only)."""
        if self.client.NAME != "Claude Code":
            return
        from wiretap.wrap.transcript import find_transcript, tool_use_ids

        files = [f for wrapped in self.wrapped for f in recordings_of(wrapped.recording)]
        found = find_transcript(self.env, tool_use_ids(files), self.started)
        if found is not None:
            self.manifest["transcript"] = str(found)

    def _write_manifest(self, *, running: bool) -> None:
        self.manifest["running"] = running
        self.manifest["servers"] = [self._server_entry(w, running) for w in self.wrapped]
        self.manifest["servers"] += self._authorization_servers(running)
        self.manifest["not_wrapped"] = self.skipped
        path = self.folder / MANIFEST
        write_private(path, json.dumps(self.manifest, indent=2) + "\n")

    def _authorization_servers(self, running: bool) -> list[dict[str, Any]]:
        """The other hosts the forward proxy recorded (authorization servers), each as a server of its own."""
        if not any(w.forward for w in self.wrapped):
            return []
        claimed = {f.name for w in self.wrapped for f in recordings_of(w.recording)}
        found = []
        for file in sorted(self.folder.glob("*.jsonl")):
            if file.name in claimed:
                continue
            server = Server(file.stem, "authorization server", {"type": "http"})
            found.append(self._server_entry(Wrapped(server, file, {}, forward=True), running))
        return found

    @staticmethod
    def _server_entry(wrapped: Wrapped, running: bool) -> dict[str, Any]:
        files = recordings_of(wrapped.recording)
        # Each recorder finishes its recording on its own, after its tap or proxy has exited.
        settled = (
            [] if running else [await_end(f, SETTLE_TIMEOUT, patient=True).complete for f in files]
        )  # each, not the first
        for file in [] if running else files:  # and exits a moment later: no process outlives the session
            wait_released(file, RELEASE_TIMEOUT)
        complete = None if running else all(settled)
        return {
            "name": wrapped.server.name,
            "scope": wrapped.server.scope,
            "transport": wrapped.server.transport,
            "recording": wrapped.recording.name,
            "recordings": [f.name for f in files],
            "messages": None if running else sum(_message_count(f) for f in files),
            "complete": complete,
            "missing_variables": sorted(wrapped.server.missing_vars),
            "limits": server_limits(wrapped.server.entry),
        }

    def _summary(self, stderr: IO[str]) -> None:
        moved = " (a new folder: --out was not empty)" if self.moved else ""
        lines = [f"wiretap: session {self.folder}{moved}"]
        for server in self.manifest["servers"]:
            lines.append(f"  {server['name']} ({server['transport']}): {_recorded(server)}")
        lines += [f"  not wrapped: {reason}" for reason in self.skipped]
        lines.append(f"  read it with: wiretap show {self.folder}   (or: wiretap report {self.folder})")
        with contextlib.suppress(OSError):
            print("\n".join(lines), file=stderr, flush=True)
