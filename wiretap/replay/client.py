"""A recorded client, driving a live server: ``wiretap replay RECORDING --as client -- SERVER…``.

The recorded client's messages go out in order, each once the responses it had when it was sent have
arrived, and at its recorded offset from the later of the previous message and those responses
(scaled by the pace). Ids the live server makes up (a task id, a context id) are learned from its
responses and put in place of the recorded ones in what is sent next. A request from the server
(elicitation, roots, sampling) is matched to a recorded one and answered with the recorded answer,
under the live request's id. Every live response is then compared with the recorded one, volatile parts
ignored (structural_diff.py); a task poll that caught the task in another of its recorded states is
timing, not a difference. A server that exits, or refuses a request with an HTTP error, leaves what it
did not answer missing at once (not after ``--timeout``). With ``--out`` the live run is recorded
through ``wiretap tap`` (stdio) or ``wiretap proxy`` (HTTP), as any other run would be.
"""

from __future__ import annotations

import asyncio
from typing import IO

from wiretap.replay.drive import ClientOptions
from wiretap.replay.links.http import replay_http
from wiretap.replay.links.stdio import replay_stdio
from wiretap.replay.result import ClientResult, Unreachable
from wiretap.replay.script import Script


def replay_client(
    script: Script,
    server: list[str],
    upstream: str | None,
    options: ClientOptions,
    *,
    out: IO[str],
    notes: IO[str],
) -> ClientResult:
    """Run the recorded client against the live server; print the differences to ``out``."""
    runner = replay_http(script, upstream, options) if upstream else replay_stdio(script, server, options)
    try:
        result = asyncio.run(runner)
    except Unreachable as exc:
        print(f"wiretap replay: {exc}", file=notes)
        return ClientResult(unreachable=str(exc))
    result.recording = options.out
    result.report(out)
    timing = [c for c in result.compared if c.timing]
    print(
        f"wiretap replay: {len(result.compared)} response(s) compared, {len(result.differing)} differ"
        + (f", {len(timing)} poll(s) caught the task at another moment" if timing else "")
        + (f", {len(result.unexpected)} unexpected request(s) from the server" if result.unexpected else ""),
        file=notes,
    )
    return result
