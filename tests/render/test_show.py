"""``wiretap show`` and ``wiretap demo`` as a person uses them."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from click.testing import CliRunner
from support import paths

from wiretap.cli import cli
from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

DEMO = paths.RECORDINGS / "demo.jsonl"


def show(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["show", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_demo_recording_reads_as_a_timeline() -> None:
    code, out, _ = show(str(DEMO))
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[1:3] == ["IN", "server/discover"] for line in lines)
    (report,) = [line for line in lines if "OUT" in line and "tools/call" in line and "Report ready" in line]
    assert " ok " in report
    assert lines[-1].split()[1:3] == ["---", "end"]
    assert "\x1b[" not in out


def test_filters_combine() -> None:
    code, out, _ = show(str(DEMO), "--method", "tools/*", "--dir", "out")
    assert code == 0
    assert [line.split()[1:3] for line in out.splitlines()] == [
        ["OUT", "tools/list"],
        ["OUT", "tools/call"],
        ["OUT", "tools/call"],
    ]


def test_json_output_has_one_object_per_row_with_pairing() -> None:
    code, out, _ = show(str(DEMO), "--json", "--method", "tools/call")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 4
    assert [r["lane"] for r in rows] == ["IN", "OUT", "IN", "OUT"]
    assert rows[3]["latency"] > 0.5 and rows[3]["event"]["msg"]["id"] == rows[2]["id"]


def test_colour_can_be_forced_for_a_pager() -> None:
    _, out, _ = show(str(DEMO), "--color")
    assert "\x1b[" in out


def test_a_truncated_recording_shows_what_it_can_and_says_what_it_skipped(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    data = DEMO.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    code, out, err = show(str(cut))
    assert code == 0
    assert "server/discover" in out
    assert "truncated last line" in err


def test_a_file_that_is_not_a_recording_gets_one_line_and_exit_2_a_missing_one_exit_3(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    code, _, err = show(str(other))
    assert code == 2
    assert err.strip() == f"Error: {other}: not a wiretap recording (line 1 is not a wiretap header)"
    code, _, err = show(str(tmp_path / "missing.jsonl"))
    assert code == 3 and err.strip() == f"Error: {tmp_path / 'missing.jsonl'}: No such file or directory"


def test_follow_prints_events_as_they_are_written_and_stops_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiretap", "show", "--follow", str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    with proc:

        def write_slowly() -> None:
            with path.open("wb") as f:
                f.write(encode_event(Header(transport="stdio", name="live", argv=[]).to_dict())[0])
                f.flush()
                for i in range(3):
                    time.sleep(0.2)
                    f.write(encode_event({"t": i, "kind": "stderr", "text": f"line {i}"})[0])
                    f.flush()
                f.write(encode_event({"t": 3, "kind": "end"})[0])

        writer = threading.Thread(target=write_slowly)
        writer.start()
        first = proc.stdout.readline()
        assert "line 0" in first
        writer.join()
        rest = proc.stdout.read()
        assert proc.wait(10) == 0
    assert "line 2" in rest and "end" in rest


def test_the_demo_runs_offline_and_prints_its_timeline_and_file(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wiretap", "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "build_report" in result.stdout and "notifications/progress" in result.stdout
    (recording,) = (tmp_path / "wiretap-recordings").iterdir()
    assert f"wiretap show wiretap-recordings/{recording.name}" in result.stdout
