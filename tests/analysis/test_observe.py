"""A report's observer keeps only the handshake and the shutdown; they must be the profile's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import paths

from wiretap.analysis.behaviour import Handshake
from wiretap.analysis.conversation import Conversation, Message
from wiretap.analysis.observe import Observer
from wiretap.recording.events import Event
from wiretap.recording.reader import open_recording

RECORDINGS = sorted(paths.RECORDINGS.rglob("*.jsonl"))
REPORTED = ("method", "protocol_version", "era", "client_name", "client_version", "capabilities", "attempts")


def fed(observer: Observer, conversation: Conversation, event: Event) -> None:
    """As a report's pass feeds it: every event, and (without behaviour) the conversation's messages."""
    observer.feed(event)
    for item in conversation.feed(event):
        if isinstance(item, Message) and not observer.keeps_behaviour:
            observer.handshake_message(item)


def observed(path: Path, behaviour: bool) -> Observer:
    observer, conversation = Observer(behaviour), Conversation()
    reader = open_recording(path, wait=0)
    with reader:
        for event in reader.events():
            fed(observer, conversation, event)
    return observer


def reported(handshake: Handshake) -> tuple[object, ...]:
    return tuple(getattr(handshake, name) for name in REPORTED)


def test_there_are_recordings_with_a_handshake_to_compare() -> None:
    named = [path for path in RECORDINGS if observed(path, behaviour=False).handshake().client_name]
    assert len(named) >= 10


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.name)
def test_a_reports_observer_names_the_handshake_and_shutdown_a_profile_does(path: Path) -> None:
    light, full = observed(path, behaviour=False), observed(path, behaviour=True)
    assert reported(light.handshake()) == reported(full.handshake())
    assert light.shutdown(None) == full.shutdown(None)


def test_a_stateless_client_is_named_from_its_first_requests_meta_in_both_modes() -> None:
    meta = {"io.modelcontextprotocol/clientInfo": {"name": "lean", "version": "1.0"}}
    events = [
        {"t": 0.1, "kind": "message", "dir": "c2s", "msg": {"jsonrpc": "2.0", "method": "notifications/x"}},
        {"t": 0.2, "kind": "message", "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
        {
            "t": 0.3,
            "kind": "message",
            "dir": "c2s",
            "msg": {"id": 2, "method": "tools/call", "params": {"_meta": meta}},
        },
        {"t": 0.4, "kind": "message", "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 2, "result": {}}},
    ]
    for behaviour in (False, True):
        observer, conversation = Observer(behaviour), Conversation()
        for event in events:
            fed(observer, conversation, event)
        assert (observer.handshake().client_name, observer.handshake().client_version) == ("lean", "1.0")
