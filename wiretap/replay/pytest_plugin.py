"""pytest fixtures for recordings as fixtures: installing wiretap registers this plugin (entry point
``pytest11``), so every test can ask for the ``wiretap_replay`` fixture.

```python
def test_the_client_against_the_recorded_server(wiretap_replay):
    server = wiretap_replay.server("tests/data/reports.jsonl", strict=True)
    run_my_client(server.command)
```

Every replay a test starts is stopped when the test ends; with ``strict=True`` a request the recording
does not hold fails the test.

Record modes (pytest-recording's vocabulary; record_modes.py): ``wiretap_stdio(command)`` and
``wiretap_http(url)`` give the real server through wiretap while recording and a replay otherwise, chosen by
``--wiretap-record-mode=once|new_episodes|none|all``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from wiretap.replay.record_modes import DEFAULT_DIR, DEFAULT_MODE, MODES, NoRecording, Wiretap, scratch_dir
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


# -- record modes -------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("wiretap")
    group.addoption(
        "--wiretap-record-mode",
        choices=MODES,
        default=None,
        help=f"once, new_episodes, none or all (pytest-recording's meaning; default: ini or {DEFAULT_MODE}).",
    )
    parser.addini("wiretap_record_mode", f"The record mode when not given on the command line ({DEFAULT_MODE}).")
    parser.addini("wiretap_recordings_dir", f"Recordings folder, relative to each test file ({DEFAULT_DIR}).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "wiretap(recording=PATH, expect=YAML, mode=MODE): where this test's recording is, what to check."
    )


def _state(request: pytest.FixtureRequest, tmp_path: Path) -> Wiretap:
    state: Wiretap | None = getattr(request.node, "_wiretap", None)
    if state is not None:
        return state
    marker = request.node.get_closest_marker("wiretap")
    options = dict(marker.kwargs) if marker is not None else {}
    config = request.config
    mode = str(options.get("mode") or config.getoption("--wiretap-record-mode") or "")
    mode = mode or str(config.getini("wiretap_record_mode") or DEFAULT_MODE)
    if mode not in MODES:
        raise pytest.UsageError(f"wiretap record mode {mode!r}: one of {', '.join(MODES)}")
    here = Path(str(request.node.fspath)).parent
    explicit = options.get("recording")
    state = Wiretap(
        mode=mode,
        base=here / str(config.getini("wiretap_recordings_dir") or DEFAULT_DIR),
        module=Path(str(request.node.fspath)).stem,
        test=request.node.name,
        scratch=scratch_dir(),
        explicit=None if explicit is None else here / str(explicit),
    )
    request.node._wiretap = state
    request.addfinalizer(state.close)
    return state


@pytest.fixture
def wiretap_stdio(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``wiretap_stdio(command, *, name=None)``: the argv the client should spawn for the server."""
    state = _state(request, tmp_path)

    def stdio(command: Sequence[str], *, name: str | None = None) -> list[str]:
        try:
            return state.stdio(command, name=name)
        except NoRecording as exc:
            pytest.fail(str(exc), pytrace=False)

    return stdio


@pytest.fixture
def wiretap_http(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``wiretap_http(url, *, name=None)``: the URL the client should use for the server."""
    state = _state(request, tmp_path)

    def http(url: str, *, name: str | None = None) -> str:
        try:
            return state.http(url, name=name)
        except NoRecording as exc:
            pytest.fail(str(exc), pytrace=False)

    return http


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """After the test body: a replay miss or an unmet expectation fails the test itself. A test that failed
    on an answer the replay could not give fails with the miss, its cause."""
    state: Wiretap | None = getattr(item, "_wiretap", None)
    try:
        result = yield
    except Exception as exc:
        misses = state.finish() if state is not None else []
        if misses:
            raise pytest.fail.Exception("wiretap: " + "\n".join(misses), pytrace=False) from exc
        raise
    if state is None:
        return result
    problems = state.finish()
    marker = item.get_closest_marker("wiretap")
    expect = marker.kwargs.get("expect") if marker is not None else None
    if expect is not None:
        problems += _unmet(Path(str(item.fspath)).parent / str(expect), state)
    if problems:
        pytest.fail("wiretap: " + "\n".join(problems), pytrace=False)
    return result


def _unmet(path: Path, state: Wiretap) -> list[str]:
    from wiretap.judge.check import check, load_expectations

    expectations = load_expectations(path)
    out = []
    for use in state.uses:
        if not use.live.is_file():
            continue
        for judged in check(use.live, expectations):
            if not judged.outcome.ok:
                evidence = "".join(f"\n    {line}" for line in judged.outcome.evidence)
                where = f"{path.name}:{judged.expectation.line} {judged.expectation.name}"
                out.append(f"{where}: {judged.outcome.summary}{evidence}")
    return out
