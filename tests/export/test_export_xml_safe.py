"""SVG and HTML exports are valid for any input: characters XML forbids never reach the output."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from wiretap.cli import cli
from wiretap.export.xmlsafe import xml_safe
from wiretap.recording.events import Header
from wiretap.recording.writer import encode_event

FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
NASTY = "a\x01b\x00c\x1bd\ufffe\uffff\x0b"


def nasty_recording(path: Path) -> Path:
    header = Header(transport="stdio", name=f"srv{NASTY}", argv=[f"srv{NASTY}"]).to_dict()
    events = [
        {"t": 0.1, "kind": "message", "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1, "method": f"tools/{NASTY}"}},
        {"t": 0.2, "kind": "message", "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"x": NASTY}}},
        {"t": 0.3, "kind": "stderr", "text": f"log {NASTY}"},
        {"t": 0.4, "kind": "message", "dir": "c2s", "msg": {"jsonrpc": "2.0", "method": f"notify{NASTY}"}},
    ]
    lines = [encode_event(e)[0] for e in [header, *events]]
    # A lone surrogate, as a JSON escape (it cannot be written as UTF-8 text).
    lines.append(b'{"t":0.5,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","method":"x\\ud800y"}}\n')
    path.write_bytes(b"".join(lines))
    return path


def export(recording: Path, out: Path) -> str:
    result = CliRunner().invoke(cli, ["export", str(recording), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_an_svg_of_a_recording_full_of_forbidden_characters_parses_as_xml(tmp_path: Path) -> None:
    svg = export(nasty_recording(tmp_path / "rec.jsonl"), tmp_path / "out.svg")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg") and not FORBIDDEN.search(svg)
    assert "\u2401" in svg  # U+0001 is shown, as ␁


def test_an_html_report_of_it_holds_no_forbidden_character(tmp_path: Path) -> None:
    html = export(nasty_recording(tmp_path / "rec.jsonl"), tmp_path / "out.html")
    assert not FORBIDDEN.search(html)
    HTMLParser().feed(html)
    # Every text the page holds, cut out and parsed as XML content: what a strict parser would meet.
    markup = re.sub(r"<(script|style)>.*?</\1>", "", html, flags=re.S)
    for text in re.findall(r">([^<]*)<", markup):
        ET.fromstring(f"<t>{text}</t>")


@pytest.mark.parametrize("fmt", ["har", "mermaid"])
def test_other_exports_of_it_can_be_written(fmt: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", str(nasty_recording(tmp_path / "rec.jsonl")), "--format", fmt])
    # HAR of a stdio recording has nothing to carry: status 2 (bad input), said in one line
    assert result.exit_code == (2 if fmt == "har" else 0) and "Traceback" not in result.output


def test_xml_safe_keeps_every_allowed_character() -> None:
    allowed = "\t\n\r plain é ✓ \U0001f600 \ufffd"
    assert xml_safe(allowed) == allowed
    assert json.dumps(xml_safe("\x01\ud800")) == json.dumps("\u2401\ufffd")
