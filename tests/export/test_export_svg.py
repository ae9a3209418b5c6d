"""``wiretap export --format svg``: a timeline that is well-formed SVG and shows what the recording holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import paths
from support.export_recordings import T1_POLLS, T2_POLLS, Recording, claude_code_tasks, relentless_poller, status

from wiretap.cli import cli
from wiretap.export.draw import PLOT
from wiretap.export.svg import axis_label, nice_step
from wiretap.export.svg_lane import TICKS_PER_PX

NS = "{http://www.w3.org/2000/svg}"
REPO = paths.REPO


def export_svg(recording: Path, tmp_path: Path) -> ET.Element:
    out = tmp_path / "timeline.svg"
    result = CliRunner().invoke(cli, ["export", str(recording), "--format", "svg", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return ET.parse(out).getroot()


def lane(svg: ET.Element, title: str) -> ET.Element:
    found = [g for g in svg.iter(f"{NS}g") if "lane" in g.get("class", "").split() and g.get("data-title") == title]
    assert len(found) == 1, [g.get("data-title") for g in svg.iter(f"{NS}g") if g.get("data-title")]
    return found[0]


def texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{NS}text")]


def classed(element: ET.Element, tag: str, name: str) -> list[ET.Element]:
    return [e for e in element.iter(f"{NS}{tag}") if name in e.get("class", "").split()]


def test_each_task_is_a_lane_with_its_polls_as_ticks_on_a_shared_axis(tmp_path: Path) -> None:
    svg = export_svg(claude_code_tasks(tmp_path / "rec.jsonl"), tmp_path)
    assert svg.tag == f"{NS}svg" and svg.get("width") == "800"
    t1, t2 = lane(svg, "task T1 (build_report)"), lane(svg, "task T2 (build_report)")
    assert [float(e.get("data-t", "")) for e in classed(t1, "line", "poll")] == T1_POLLS
    assert [float(e.get("data-t", "")) for e in classed(t2, "line", "poll")] == T2_POLLS
    x = {float(e.get("data-t", "")): float(e.get("x1", "")) for e in classed(t2, "line", "poll")}
    assert x[26.0] - x[25.0] == pytest.approx(x[30.0] - x[29.0], abs=0.11), "one second is one width everywhere"
    assert {"working", "input_required", "completed", "answer"} <= set(texts(t1))
    assert "0 s" in texts(svg) and "30 s" in texts(svg)


def test_an_open_question_is_shaded_and_its_longest_gap_labelled_with_its_length(tmp_path: Path) -> None:
    svg = export_svg(claude_code_tasks(tmp_path / "rec.jsonl"), tmp_path)
    t1 = lane(svg, "task T1 (build_report)")
    (window,) = classed(t1, "rect", "question")
    assert (window.get("data-start"), window.get("data-end")) == ("8.800", "20.000")
    assert float(window.get("fill-opacity", "1")) < 0.5, "shaded, not painted over"
    (gap,) = classed(t1, "g", "gap")
    assert gap.get("data-length") == "11.200"
    assert [t.text for t in classed(t1, "text", "gap-label")] == ["longest gap 11.20 s"]
    assert not classed(lane(svg, "task T2 (build_report)"), "rect", "question")


def test_the_client_exit_is_marked_across_every_lane(tmp_path: Path) -> None:
    svg = export_svg(claude_code_tasks(tmp_path / "rec.jsonl"), tmp_path)
    (exit_mark,) = classed(svg, "g", "client-exit")
    assert exit_mark.get("data-t") == "31.500"
    assert "client exit 31.50 s (stdin closed)" in texts(exit_mark)
    (line,) = exit_mark.iter(f"{NS}line")
    lanes = classed(svg, "g", "lane")
    assert float(line.get("y1", "")) <= 100 and float(line.get("y2", "")) >= 100 + 60 * 2 + 42
    assert len(lanes) == 3, "two tasks and the stdio pipe"
    assert classed(svg, "g", "server-exit")


def test_stdio_traffic_is_a_lane_with_messages_in_above_and_out_below(tmp_path: Path) -> None:
    svg = export_svg(claude_code_tasks(tmp_path / "rec.jsonl"), tmp_path)
    stdio = lane(svg, "stdio")
    ins, outs = classed(stdio, "line", "c2s"), classed(stdio, "line", "s2c")
    assert len(ins) == 13 and len(outs) == 13
    assert float(ins[0].get("y2", "")) <= float(outs[0].get("y1", ""))


def test_ten_thousands_of_polls_become_a_density_strip_and_the_file_stays_small(tmp_path: Path) -> None:
    svg = export_svg(relentless_poller(tmp_path / "rec.jsonl"), tmp_path)
    task = lane(svg, "task L (x)")
    assert not classed(task, "line", "poll"), "no tick per poll"
    (strip,) = classed(task, "g", "density")
    assert strip.get("data-count") == "20000"
    assert int(strip.get("data-max-per-px", "0")) > TICKS_PER_PX
    assert 1 <= len(list(strip.iter(f"{NS}rect"))) <= PLOT
    assert (tmp_path / "timeline.svg").stat().st_size < 150_000
    assert "completed" in texts(task), "the state band stays on top of the strip"


def test_a_few_close_polls_stay_ticks(tmp_path: Path) -> None:
    r = Recording()
    r.call(0.0, "tools/call", {"name": "x", "task": {}}, 0.1, {"task": {"taskId": "A", "status": "working"}})
    for t in (1.0, 1.01, 50.0, 100.0):
        r.call(t, "tasks/get", {"taskId": "A"}, t + 0.001, {"taskId": "A", "status": "working"})
    svg = export_svg(r.write(tmp_path / "rec.jsonl"), tmp_path)
    ticks = classed(lane(svg, "task A (x)"), "line", "poll")
    assert len(ticks) == 4 - 1, "two polls in one pixel column are one tick"


def test_many_tasks_show_the_most_interesting_and_fold_the_rest_into_one_lane(tmp_path: Path) -> None:
    r = Recording()
    for n in range(30):
        task = f"K{n:02d}"
        r.call(n, "tools/call", {"name": "x", "task": {}}, n + 0.1, {"task": {"taskId": task, "status": "working"}})
        for k in range(1 + n % 4):
            r.call(n + 0.5 + k * 0.1, "tasks/get", {"taskId": task}, n + 0.55 + k * 0.1, {"status": "working"})
    svg = export_svg(r.write(tmp_path / "rec.jsonl"), tmp_path)
    titles = [g.get("data-title") for g in classed(svg, "g", "lane")]
    assert len(titles) == 11 + 1 + 1 and titles[-2] == "19 more tasks" and titles[-1] == "stdio"


def test_names_that_look_like_markup_are_escaped(tmp_path: Path) -> None:
    r = Recording()
    evil = '<script>alert("x")</script> & ]]>'
    r.call(0.0, "tools/call", {"name": evil, "task": {}}, 0.1, {"task": {"taskId": "E&<", "status": "working"}})
    r.call(1.0, "tasks/get", {"taskId": "E&<"}, 1.1, status("E&<", "working"))
    svg = export_svg(r.write(tmp_path / "rec.jsonl", name="a<b>&c"), tmp_path)
    assert lane(svg, f"task E&< ({evil})") is not None
    assert not list(svg.iter(f"{NS}script"))


def test_long_recordings_get_minutes_on_the_axis() -> None:
    assert nice_step(601.0) == 120.0 and axis_label(240.0, 120.0) == "4 min"
    assert nice_step(31.6) == 5.0 and axis_label(25.0, 5.0) == "25 s"
    assert nice_step(0.94) == 0.2 and axis_label(0.4, 0.2) == "0.4 s"
    assert axis_label(7200.0, 3600.0) == "2 h 00 min"


def test_http_connections_are_lanes(tmp_path: Path) -> None:
    r = Recording()
    for conn in (1, 2):
        r.lifecycle(conn * 1.0, "connection", conn=conn, state="open", peer="127.0.0.1:1")
        r.lifecycle(conn * 1.0 + 0.1, "http_request", ex=conn, conn=conn, method="POST", path="/mcp", headers={})
        r.events.append(
            {"t": conn + 0.2, "kind": "message", "dir": "c2s", "ex": conn, "msg": {"id": conn, "method": "ping"}}
        )
        r.events.append(
            {"t": conn + 0.3, "kind": "message", "dir": "s2c", "ex": conn, "msg": {"id": conn, "result": {}}}
        )
        r.lifecycle(conn * 1.0 + 0.4, "connection", conn=conn, state="closed")
    svg = export_svg(r.write(tmp_path / "rec.jsonl", transport="http", upstream="http://up.example/mcp"), tmp_path)
    assert [g.get("data-title") for g in classed(svg, "g", "lane")] == ["connection 1", "connection 2"]
    assert classed(svg, "g", "client-exit"), "the last connection closing is the client leaving"


@pytest.mark.parametrize("recording", sorted((REPO / "recordings").glob("*.jsonl")), ids=lambda p: p.name)
def test_every_shipped_recording_exports_to_a_well_formed_timeline(recording: Path, tmp_path: Path) -> None:
    svg = export_svg(recording, tmp_path)
    assert classed(svg, "g", "lane") and svg.find(f"{NS}title") is not None
