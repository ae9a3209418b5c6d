"""Recordings as test fixtures in a few lines: ``wiretap.replay.testing`` and its pytest fixture."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.replayrun import TASK_SERVER, LineClient, play_session, recorded_session

from wiretap.replay.testing import ReplayMisses, replay_client, replayed_server

if TYPE_CHECKING:  # pytest imports the plugin itself, to rewrite its asserts
    from wiretap.replay.pytest_plugin import Replays


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay-testing") / "session.jsonl"
    recorded_session(path)
    return path


def test_a_test_records_a_live_server_once_and_then_runs_against_its_replay(wiretap_replay: Replays) -> None:
    command, recording = wiretap_replay.record(TASK_SERVER)
    live = LineClient(command)
    recorded = play_session(live)
    assert live.close() == 0

    server = wiretap_replay.server(recording, strict=True)
    client = LineClient(server.command)
    replayed = play_session(client)
    assert client.close() == 0
    assert {k: r.message for k, r in replayed.items()} == {k: r.message for k, r in recorded.items()}
    assert server.summary()["matched"] == 5


def test_strict_fails_the_test_when_the_client_asked_for_something_the_recording_lacks(recording: Path) -> None:
    with (
        pytest.raises(ReplayMisses, match=r'tools/call \{"name": "nope"'),
        replayed_server(recording, strict=True) as server,
    ):
        client = LineClient(server.command)
        client.call(1, "tools/call", {"name": "nope", "arguments": {}})
        client.close()


def test_a_replayed_http_server_gives_its_url_and_stops_with_the_block(recording: Path) -> None:
    with replayed_server(recording, http=True) as server:
        assert server.url is not None
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
        request = urllib.request.Request(server.url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["result"]["tools"][0]["name"] == "migrate"
    assert server.summary()["matched"] == 1


def test_replay_client_tells_a_test_how_a_server_answers_differently(recording: Path) -> None:
    assert replay_client(recording, TASK_SERVER).exit_status == 0
    result = replay_client(recording, [*TASK_SERVER, "--shout"])
    assert result.exit_status == 1
    [differing] = result.differing
    assert differing.exchange.number == 3
    assert [d.path for d in differing.differences] == ["result.content[0].text"]
