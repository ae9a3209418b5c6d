"""``wiretap export --format mermaid``: a sequence diagram that Mermaid's own parser reads as meant."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import paths
from support.export_recordings import Recording, claude_code_tasks, relentless_poller

from wiretap.cli import cli
from wiretap.export.mermaid import MAX_LINES, escape

REPO = paths.REPO


def export_mermaid(recording: Path) -> str:
    result = CliRunner().invoke(cli, ["export", str(recording), "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    return result.output


def arrows(diagram: str) -> list[tuple[str, str, str, str]]:
    """(from, arrow, to, text) of every message line: a structural reading of the diagram."""
    found = re.findall(r"^    (\w+)(->>|-->>|--x|-\))(\w+): (.+)$", diagram, re.MULTILINE)
    return [(a, b, c, d) for a, b, c, d in found]


def test_client_and_server_are_the_participants_and_every_exchange_an_arrow(tmp_path: Path) -> None:
    diagram = export_mermaid(REPO / "recordings" / "demo.jsonl")
    lines = diagram.splitlines()
    assert lines[:3] == ["sequenceDiagram", "    participant C as client", "    participant S as demo (server)"]
    messages = arrows(diagram)
    assert messages[0] == ("C", "->>", "S", "0.01 s server/discover #35;1 2026-07-28 wiretap-demo-client 1.0.0")
    assert messages[-1][:3] == ("S", "--x", "C") and "error -32601" in messages[-1][3]
    assert "    Note over C: 0.94 s eof: client closed stdin" in lines
    assert "    Note over S: 0.94 s exit: server code 0 (status 0)" in lines


def test_repeated_polls_collapse_into_one_line_with_their_count_and_interval(tmp_path: Path) -> None:
    messages = arrows(export_mermaid(claude_code_tasks(tmp_path / "rec.jsonl")))
    texts = [text for _, _, _, text in messages]
    assert "25.00–30.00 s tasks/get T2 ×6, every 1.00 s" in texts
    assert "6 answers: working ×6" in texts
    assert "3.32–8.80 s tasks/get T1 ×3, intervals 3.00, 2.48 s" in texts
    assert "3 answers: working ×2, input_required" in texts
    assert any("tasks/update" in text for text in texts), "the answer to the question breaks the run"
    assert len(messages) == 12


def test_twenty_thousand_polls_are_one_line(tmp_path: Path) -> None:
    messages = arrows(export_mermaid(relentless_poller(tmp_path / "rec.jsonl")))
    assert ("C", "->>", "S", "0.30–600.27 s tasks/get L ×20000, every 0.03 s") in messages
    assert len(messages) == 4


def test_a_diagram_too_long_to_read_ends_with_a_note(tmp_path: Path) -> None:
    r = Recording()
    for n in range(MAX_LINES):
        r.call(n, "tools/call", {"name": f"t{n}"}, n + 0.5, {"content": []})
    diagram = export_mermaid(r.write(tmp_path / "rec.jsonl"))
    assert len(arrows(diagram)) == MAX_LINES
    assert diagram.splitlines()[-1] == f"    Note over C,S: … {MAX_LINES} more lines: see wiretap show"


def test_text_that_would_end_or_break_a_mermaid_line_is_escaped() -> None:
    assert escape("a#b;c<d>e%f\ng") == "a#35;b#59;c#60;d#62;e#37;f g"
    assert escape("") == "(empty)"


def test_an_http_recording_names_the_upstream_and_draws_requests_without_a_body_from_their_head(tmp_path: Path) -> None:
    r = Recording()
    r.lifecycle(0.1, "http_request", ex=1, conn=1, method="POST", path="/mcp", headers={})
    r.events.append({"t": 0.2, "kind": "message", "dir": "c2s", "ex": 1, "msg": {"id": 1, "method": "ping"}})
    r.events.append({"t": 0.3, "kind": "message", "dir": "s2c", "ex": 1, "msg": {"id": 1, "result": {}}})
    r.lifecycle(0.4, "http_request", ex=2, conn=1, method="GET", path="/.well-known/agent-card.json", headers={})
    r.lifecycle(0.5, "http_response", ex=2, status=200, reason="OK", headers={})
    r.events.append({"t": 0.6, "kind": "message", "dir": "s2c", "ex": 2, "msg": {"name": "agent", "url": "x"}})
    r.lifecycle(0.7, "http_request", ex=3, conn=1, method="DELETE", path="/mcp", headers={})
    r.lifecycle(0.8, "http_response", ex=3, status=405, reason="Method Not Allowed", headers={})
    recording = r.write(tmp_path / "rec.jsonl", transport="http", upstream="https://agents.example:8443/mcp")
    diagram = export_mermaid(recording)
    assert "    participant S as agents.example:8443/mcp" in diagram
    assert arrows(diagram) == [
        ("C", "->>", "S", "0.20 s ping #35;1"),
        ("S", "-->>", "C", "0.30 s ping #35;1 ok 100 ms"),
        ("C", "->>", "S", "0.40 s GET /.well-known/agent-card.json"),
        ("S", "-->>", "C", "0.50 s HTTP 200 OK"),
        ("S", "-->>", "C", "0.60 s JSON body (name, url)"),
        ("C", "->>", "S", "0.70 s DELETE /mcp"),
        ("S", "--x", "C", "0.80 s HTTP 405 Method Not Allowed"),
    ]


def _decoded(text: str) -> str:
    """Mermaid keeps '#35;' entities encoded in its model until it renders them."""
    return re.sub(r"ﬂ°°(\d+)¶ß", lambda m: chr(int(m.group(1))), text)


def parse(*diagrams: str) -> list[dict[str, Any]]:
    from support import export_peers

    try:
        return export_peers.parse_mermaid(list(diagrams))
    except export_peers.RegistryUnreachable as exc:
        pytest.skip(str(exc))


@pytest.mark.slow
def test_mermaids_own_parser_reads_the_diagram_as_meant(tmp_path: Path) -> None:
    diagram = export_mermaid(claude_code_tasks(tmp_path / "rec.jsonl"))
    (parsed,) = parse(diagram)
    assert parsed["ok"], parsed
    assert parsed["type"] == "sequence"
    assert parsed["actors"] == [{"id": "C", "description": "client"}, {"id": "S", "description": "reports (server)"}]
    ours = arrows(diagram)
    theirs = [m for m in parsed["messages"] if m["from"] and m["to"] and m["placement"] is None]
    assert [(m["from"], m["to"]) for m in theirs] == [(a, c) for a, _, c, _ in ours]
    assert [_decoded(m["text"]) for m in theirs][:2] == [
        "0.30 s tools/call #1 build_report",
        "0.32 s tools/call #1 ok 20 ms task T1 working poll 3000ms",
    ]
    assert "25.00–30.00 s tasks/get T2 ×6, every 1.00 s" in [m["text"] for m in theirs]


@pytest.mark.slow
def test_mermaids_parser_rejects_a_broken_diagram_so_the_check_means_something() -> None:
    (parsed,) = parse("sequenceDiagram\n    C->>: 1 ; # x\n    participant\n")
    assert not parsed["ok"] and "Parse error" in parsed["error"]


@pytest.mark.slow
def test_mermaids_parser_reads_hostile_text_and_every_shipped_recording(tmp_path: Path) -> None:
    r = Recording()
    hostile = 'a;b #1 <br> <script>x</script> %% not a comment -->> C: "quoted" ]]'
    r.call(
        0.0, "tools/call", {"name": hostile, "arguments": {"q": hostile}}, 0.1, error={"code": -1, "message": hostile}
    )
    r.send(0.2, "s2c", {"method": "notifications/message", "params": {"data": hostile}})
    diagrams = [export_mermaid(r.write(tmp_path / "rec.jsonl", name="x;y#z"))]
    diagrams += [export_mermaid(path) for path in sorted((REPO / "recordings").glob("*.jsonl"))]
    for diagram, parsed in zip(diagrams, parse(*diagrams), strict=True):
        assert parsed["ok"], (parsed, diagram)
        assert len([m for m in parsed["messages"] if m["placement"] is None]) == len(arrows(diagram))


def test_a_back_off_shows_its_steps_and_the_proxys_own_sigint_is_not_the_clients() -> None:
    diagram = export_mermaid(REPO / "recordings" / "a2a-backoff.jsonl")
    polls = [text for _, arrow, _, text in arrows(diagram) if arrow == "->>" and "GetTask" in text]
    assert len(polls) == 1 and polls[0].endswith("×11, intervals 1.00, 2.00, 4.00, 5.00 ×7 s"), polls
    assert "    Note over C,S: 43.01 s wiretap received SIGINT" in diagram.splitlines()
    assert "Note over C: 43.01 s signal" not in diagram
    assert "JSON body" not in diagram and "agent card (name" in diagram
