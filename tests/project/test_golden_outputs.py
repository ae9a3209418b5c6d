import json

import pytest
from support.golden_outputs import COMMANDS, ROOT, digests, output, recordings, stored_digests


def test_every_shipped_recording_and_command_has_a_stored_digest() -> None:
    expected = {f"{r.stem}/{name}" for r in recordings() for name in COMMANDS}
    assert len(expected) >= 8 * 15
    assert set(stored_digests()) == expected


def test_report_show_and_export_outputs_of_shipped_recordings_are_byte_identical(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    now, stored = digests(), stored_digests()
    changed = sorted(key for key in stored if now.get(key) != stored[key])
    assert changed == [], (
        f"outputs changed: {changed}; see `python tests/support/golden_outputs.py capture --files DIR`"
    )


def test_the_report_json_and_show_of_every_shipped_recording_succeed_so_their_digests_hold_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    for recording in recordings():
        printed = {name: output(recording, name).partition(b"\n") for name in ("report.txt", "report.json", "show.txt")}
        for name, (status, _, body) in printed.items():
            assert status == b"exit 0" and body.strip(), f"{recording.name}: {name} printed no output"
        assert json.loads(printed["report.json"][2])["recording"]["source"] == f"recordings/{recording.name}"
