"""A replay of a long recording: a live request is matched, and a miss's closest request found, by
comparing a bounded number of recorded requests, however long the recording; recorded messages are read
back from the recording when they are served, and answer byte for byte what the parsed messages did.
Speed itself is measured in bench/replay_scale.py."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from support import paths

from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event
from wiretap.replay.index import CLOSEST_CANDIDATES
from wiretap.replay.loader import _tasks, _words_in, load_script
from wiretap.replay.pace import FAST
from wiretap.replay.plan import ReplayOptions
from wiretap.replay.player import Player, dumps
from wiretap.replay.script import Script, Step

RECORDINGS = paths.RECORDINGS
REQUESTS = 20_000
SHIPPED = sorted(RECORDINGS.rglob("*.jsonl"))


def call(i: int, **arguments: Any) -> dict[str, Any]:
    arguments = arguments or {"key": f"k{i}", "n": i}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "lookup", "arguments": arguments}}


def write(path: Path, requests: list[dict[str, Any]]) -> Path:
    """A stdio recording of these requests, each answered at once."""
    with path.open("wb") as out:
        out.write(encode_event(Header(transport="stdio", name="long", argv=["test"]).to_dict())[0])
        t = 0.0
        for request in requests:
            i = request["id"]
            result = {"content": [{"type": "text", "text": f"value of k{i} is {i * 7}"}]}
            for direction, message in (("c2s", request), ("s2c", {"jsonrpc": "2.0", "id": i, "result": result})):
                t += 0.001
                out.write(encode_event({"t": round(t, 6), "kind": "message", "dir": direction, "msg": message})[0])
    return path


@pytest.fixture(scope="module")
def long_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """REQUESTS ``tools/call`` requests, each with its own arguments and answer, and a few ``tools/list``."""
    requests = [
        call(i) if i % 1000 else {"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(1, REQUESTS + 1)
    ]
    return write(tmp_path_factory.mktemp("long") / "long.jsonl", requests)


def player_of(script: Script) -> Player:
    return Player(script, ReplayOptions(pace=FAST, replay_stderr=False), clock=lambda: 0.0)


def reads(player: Player) -> int:
    assert player.script.source is not None
    return player.script.source.reads


def test_a_live_request_is_matched_by_comparing_it_with_one_recorded_request(long_recording: Path) -> None:
    player = player_of(load_script(long_recording))
    for i in [1, 2, 999, 1001, 7777, 12345, REQUESTS - 1, 5]:
        compared, read = player.index.compared, reads(player)
        plan = player.plan(call(i))
        assert plan.exchange is not None and plan.exchange.number == i
        assert player.index.compared - compared == 1
        assert reads(player) - read == 1  # the one compared; nothing else is parsed to find it


def test_a_miss_compares_a_bounded_number_of_recorded_requests_and_names_the_closest_and_what_differed(
    long_recording: Path,
) -> None:
    player = player_of(load_script(long_recording))
    for i in range(1, 4001):
        if i % 1000:
            assert player.plan(call(i)).exchange is not None
    compared, read = player.index.compared, reads(player)
    plan = player.plan(call(4001, key="k4001", n=-1))
    assert plan.miss is not None and plan.miss.closest is not None
    assert player.index.compared - compared <= CLOSEST_CANDIDATES
    assert reads(player) - read <= CLOSEST_CANDIDATES
    assert plan.miss.closest.number == 4001
    assert plan.miss.failed == ["params.arguments.n: recorded 4001, live -1"]
    assert "closest is #4001 tools/call" in plan.miss.message()


def test_a_miss_names_the_request_for_the_same_tool_however_far_it_is_from_where_the_replay_is(
    tmp_path: Path,
) -> None:
    requests = [call(i) for i in range(1, 5001)]
    requests[4320] = {
        "jsonrpc": "2.0",
        "id": 4321,
        "method": "tools/call",
        "params": {"name": "rare", "arguments": {"x": 1}},
    }
    player = player_of(load_script(write(tmp_path / "rare.jsonl", requests)))
    compared = player.index.compared
    plan = player.plan(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "rare", "arguments": {"x": 2}}}
    )
    assert plan.miss is not None and plan.miss.closest is not None
    assert player.index.compared - compared <= CLOSEST_CANDIDATES
    assert (plan.miss.closest.number, plan.miss.failed) == (4321, ["params.arguments.x: recorded 1, live 2"])


def test_a_miss_on_a_method_the_recording_lacks_names_a_request_of_another_method(long_recording: Path) -> None:
    player = player_of(load_script(long_recording))
    compared = player.index.compared
    plan = player.plan({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"})
    assert plan.miss is not None and plan.miss.closest is not None
    assert player.index.compared - compared <= CLOSEST_CANDIDATES
    assert plan.miss.failed == ["method: recorded tools/list, live prompts/list"]


def test_repeated_requests_are_answered_in_recorded_order_then_by_the_last(long_recording: Path) -> None:
    player = player_of(load_script(long_recording))
    listed = [player.plan({"jsonrpc": "2.0", "id": n, "method": "tools/list"}) for n in range(REQUESTS // 1000 + 2)]
    numbers = [plan.exchange.number for plan in listed if plan.exchange is not None]
    assert numbers == [*range(1000, REQUESTS + 1, 1000), REQUESTS, REQUESTS]
    assert player.repeated == 2


class Capture:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def send(self, step: Step, message: dict[str, Any] | None) -> None:
        text = dumps(message) if message is not None else step.raw or ""
        self.sent.append(repr((step.t, text, step.sse, step.reply, step.ex, step.close, step.stderr)).encode())


async def answers(script: Script, *, twist: bool) -> list[list[bytes]]:
    """What the player sends for each recorded request (or, twisted, for one it does not hold)."""
    player = player_of(script)
    player.gone = True  # a question to the client is never answered: the play stops there
    out = []
    for item in script.client_items:
        if item.exchange is None:
            continue
        message = item.message
        if twist:
            message = {**message, "params": {**(message.get("params") or {}), "unheard-of": 1}}
        capture = Capture()
        await player.perform(player.plan(message), capture)
        out.append(capture.sent)
    return out


@pytest.mark.parametrize("recording", SHIPPED, ids=[str(p.relative_to(RECORDINGS)) for p in SHIPPED])
def test_a_replay_reading_messages_back_answers_byte_for_byte_what_parsed_messages_answer(recording: Path) -> None:
    stored, parsed = load_script(recording), load_script(recording, parsed=True)
    assert stored.source is not None and parsed.source is None
    for twist in (False, True):
        assert asyncio.run(answers(stored, twist=twist)) == asyncio.run(answers(parsed, twist=twist))
    assert stored.source.reads > 0 or all(e.rest is not None for e in stored.exchanges)  # A2A REST: held parsed
    assert [dumps(i.message) for i in stored.client_items] == [dumps(i.message) for i in parsed.client_items]


def test_a_long_replay_reading_messages_back_answers_what_parsed_messages_answer(long_recording: Path) -> None:
    stored, parsed = load_script(long_recording), load_script(long_recording, parsed=True)
    assert asyncio.run(answers(stored, twist=False)) == asyncio.run(answers(parsed, twist=False))


@pytest.mark.parametrize("recording", SHIPPED, ids=[str(p.relative_to(RECORDINGS)) for p in SHIPPED])
def test_the_task_pass_is_left_out_only_where_it_finds_no_task(recording: Path) -> None:
    tasks = load_script(recording).tasks
    assert {k: (t.states, t.created_at) for k, t in tasks.items()} == {
        k: (t.states, t.created_at) for k, t in _tasks(recording).items()
    }


def test_the_task_pass_is_left_out_of_a_recording_without_tasks(long_recording: Path) -> None:
    assert load_script(long_recording).tasks == {} == _tasks(long_recording)


def test_a_recording_read_from_a_pipe_is_held_parsed_and_replays_alike(tmp_path: Path) -> None:
    recording = RECORDINGS / "demo.jsonl"
    fifo = tmp_path / "demo.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(recording.read_bytes()))
    writer.start()
    piped = load_script(fifo)
    writer.join()
    assert piped.source is None
    assert asyncio.run(answers(piped, twist=False)) == asyncio.run(answers(load_script(recording), twist=False))


def test_words_are_found_across_the_pieces_a_recording_is_looked_through_in(tmp_path: Path) -> None:
    path = tmp_path / "words.bin"
    path.write_bytes(b"x" * ((1 << 18) - 3) + b"progressToken" + b"y" * (1 << 18) + b"ask")
    with path.open("rb") as file:
        scanned, found = _words_in(file.fileno(), {b"progressToken", b"ask", b"clientInfo"})
    assert found == {b"progressToken", b"ask"} and scanned == path.stat().st_size
