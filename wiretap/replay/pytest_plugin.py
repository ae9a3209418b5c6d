"""pytest fixtures for recordings as fixtures: installing wiretap registers this plugin (entry point
``pytest11``), so every test can ask for the ``wiretap_replay`` fixture.

```python
def test_the_client_against_the_recorded_server(wiretap_replay):
    server = wiretap_replay.server("tests/data/reports.jsonl", strict=True)
    run_my_client(server.command)
```

Every replay a test starts is stopped when the test ends; with ``strict=True`` a request the recording
does not hold fails the test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from wiretap.replay.testing import ReplayedServer, recorded_server, replay_client, replayed_server


class Replays:
    def __init__(self, stack: contextlib.ExitStack, tmp_path: Path) -> None:
        self._stack = stack
        self.tmp_path = tmp_path

    def server(self, recording: Path | str, **options: Any) -> ReplayedServer:
        """A replayed server for the rest of the test (see ``testing.replayed_server`` for the options)."""
        return self._stack.enter_context(replayed_server(recording, **options))

    def record(self, server: Sequence[str], name: str = "recording") -> tuple[list[str], Path]:
        """The command that records ``server`` into the test's folder, and where the recording goes."""
        out = self.tmp_path / f"{name}.jsonl"
        return recorded_server(server, out), out

    def client(self, recording: Path | str, server: Sequence[str] = (), **options: Any) -> Any:
        """Drive a live server with the recorded client (``testing.replay_client``)."""
        return replay_client(recording, server, **options)


@pytest.fixture
def wiretap_replay(tmp_path: Path) -> Iterator[Replays]:
    with contextlib.ExitStack() as stack:
        yield Replays(stack, tmp_path)
