"""``--otlp`` on ``tap``, ``proxy`` and ``wiretap -- CLIENT``: options, and starting the follower process.

Only plumbing: the follower reads the recording files, so nothing changes on the forwarding path.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from wiretap.recording.paths import recording_path

F = TypeVar("F", bound=Callable[..., Any])
_settings: dict[str, Any] | None = None
_follower: subprocess.Popen[bytes] | None = None


def otlp_options(command: F) -> F:
    """Adds ``--otlp`` and ``--otlp-endpoint``; resolves them (flags over the standard environment)
    before the command runs, so a bad setting stops it before any traffic."""

    @click.option("--otlp", is_flag=True, help="Send spans live to OTLP/HTTP (OTEL_EXPORTER_OTLP_* environment).")
    @click.option("--otlp-endpoint", metavar="URL", help="OTLP/HTTP endpoint for --otlp (implies it).")
    @functools.wraps(command)
    def wrapper(*args: Any, otlp: bool, otlp_endpoint: str | None, **kwargs: Any) -> Any:
        global _settings
        if otlp or otlp_endpoint:
            _settings = _resolve(otlp_endpoint)
        try:
            return command(*args, **kwargs)
        finally:
            otlp_done()

    return wrapper  # type: ignore[return-value]


def _resolve(endpoint: str | None) -> dict[str, Any]:
    # (imported here: every wiretap tap start reads this module, and only --otlp needs them)
    from wiretap.otel.endpoint import metrics_target, metrics_wanted, target_from
    from wiretap.otel.protobuf import INSTALL
    from wiretap.otel.resource import BadSetting, resource_attributes
    from wiretap.otel.sender import FLUSH_SECONDS, QUEUE_SPANS

    try:
        import google.protobuf  # type: ignore[import-untyped]  # noqa: F401
        import opentelemetry.proto  # noqa: F401
    except ImportError:
        raise BadSetting(INSTALL.replace("wiretap otel", "--otlp")) from None
    target = target_from(os.environ, endpoint=endpoint)
    return {
        "url": target.url, "headers": target.headers, "timeout": target.timeout,
        "resource": resource_attributes(os.environ),
        "queue": _positive(os.environ, "OTEL_BSP_MAX_QUEUE_SIZE", QUEUE_SPANS),
        "flush": _positive(os.environ, "OTEL_BSP_EXPORT_TIMEOUT", int(FLUSH_SECONDS * 1000)) / 1000,
        "metrics": metrics_target(os.environ, target).url if metrics_wanted(os.environ) else None,
    }  # fmt: skip


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    """The batch span processor's settings from the standard environment (the queue and the final flush)."""
    value = env.get(name)
    if not value:
        return default
    if not value.isdigit() or int(value) == 0:
        from wiretap.otel.resource import BadSetting

        raise BadSetting(f"{name}: {value!r} is not a positive whole number")
    return int(value)


CLAUDE_CODE = "Claude Code"
CLAUDE_TELEMETRY = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
    "OTEL_TRACES_EXPORTER": "otlp",
    # Its HTTP MCP requests carry the tool span's traceparent only with this, when ANTHROPIC_BASE_URL is set.
    "CLAUDE_CODE_PROPAGATE_TRACEPARENT": "1",
}


def client_env(client: str, env: Mapping[str, str]) -> dict[str, str]:
    """Under ``--otlp``: the variables that turn on a client's own tracing towards the same endpoint, so its
    prompt, model and tool spans and wiretap's wire spans are one trace. Only those the user has not set."""
    if _settings is None or client != CLAUDE_CODE:
        return {}
    from wiretap.otel.endpoint import TRACES_PATH

    wanted = dict(CLAUDE_TELEMETRY)
    if not env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        wanted["OTEL_EXPORTER_OTLP_ENDPOINT"] = str(_settings["url"]).removesuffix(TRACES_PATH)
        wanted["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf"
    return {k: v for k, v in wanted.items() if k not in env}


def follow_recording(out: Path | None) -> subprocess.Popen[bytes] | None:
    """For tap and proxy: follow the recording this process is about to write (found by its pid)."""
    folder = recording_path(out, "x", 0.0).parent
    return _spawn("recording", folder)


def follow_session(folder: Path) -> subprocess.Popen[bytes] | None:
    return _spawn("session", folder)


def _spawn(mode: str, folder: Path) -> subprocess.Popen[bytes] | None:
    global _follower
    if _settings is None:
        return None
    from wiretap.otel.endpoint import ENV

    env = {**os.environ, ENV: json.dumps(_settings)}
    # Its stdin is a pipe from us: its end (we are done, or gone, even killed) tells it to finish.
    # Its own session: Ctrl-C and a client killing our process group leave it to flush. No stdout: for
    # tap, ours is the protocol's pipe.
    started = f"{time.time():.6f}"
    _follower = subprocess.Popen(
        [sys.executable, "-m", "wiretap.otel.follow", mode, str(folder.absolute()), str(os.getpid()), started],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    return _follower


def expect_recording(recording: Path) -> None:
    """For tap and proxy: the recording the follower is to wait for, to its end. wiretap returns before
    its recorder process has finished the file (under load, before it has even written its header),
    and a follower that had found no recording yet would otherwise take that for nothing to send."""
    if _follower is None or _follower.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        _follower.stdin.write(os.fsencode(recording.absolute()) + b"\n")
        _follower.stdin.flush()


def otlp_done() -> None:
    """Once the traffic is over: let the follower read the recording to its end and send the rest,
    waiting for it at most its flush time, so that it does not outlive wiretap."""
    global _follower
    if _follower is None:
        return
    from wiretap.otel.sender import FLUSH_SECONDS

    follower, _follower = _follower, None
    with contextlib.suppress(OSError):
        if follower.stdin is not None:
            follower.stdin.close()
    try:
        follower.wait(float((_settings or {}).get("flush") or FLUSH_SECONDS) + 5.0)
    except subprocess.TimeoutExpired:
        follower.kill()
        follower.wait()
