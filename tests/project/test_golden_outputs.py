import pytest
from support.golden_outputs import COMMANDS, ROOT, digests, recordings, stored_digests


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
