"""``wiretap report --format html``: one self-contained page, checked as text and in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.export_recordings import Recording, claude_code_tasks

from wiretap.cli import cli

NS = "{http://www.w3.org/2000/svg}"
VOID = {"meta", "input", "br", "img", "link", "hr", "wbr"}


class Page(HTMLParser):
    """Tags as the browser would nest them, and every attribute that could fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.unbalanced: list[str] = []
        self.fetching: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self.fetching += [f"{tag} {k}={v}" for k, v in attrs if k in ("src", "href") and not (v or "").startswith("#")]
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1] == tag:
            self.open.pop()
        else:
            self.unbalanced.append(tag)


def report_html(recording: Path, out: Path) -> str:
    result = CliRunner().invoke(cli, ["report", str(recording), "--format", "html"])
    assert result.exit_code == 0, result.output
    out.write_text(result.output, encoding="utf-8")
    return result.output


def test_the_page_holds_verdicts_tables_timeline_and_messages_and_fetches_nothing(tmp_path: Path) -> None:
    html = report_html(claude_code_tasks(tmp_path / "rec.jsonl"), tmp_path / "report.html")
    page = Page()
    page.feed(html)
    assert page.unbalanced == [] and page.open == []
    assert page.fetching == [], "no network: everything inline"
    assert "url(" not in html and "@import" not in html
    classes = [attrs.get("class") or "" for _, attrs in page.tags]
    assert {"verdict poll_intervals", "verdict cancel_on_exit", "verdict elicitation_gaps"} <= set(classes)
    assert "While a question was open (8.80–20.00 s) the longest gap in polling was 11.20 s" in html
    assert re.findall(r"<h3>([^<]+)</h3>", html) == [
        "Timeline",
        "Tasks",
        "Open questions",
        "Findings",
        "Latency per method",
        "Messages",
    ]
    assert "<h3>Findings</h3><p>none</p>" in html
    assert len(re.findall(r"<details ", html)) == 30 == len(re.findall(r"<pre>", html))
    svg = ET.fromstring(html[html.index("<svg") : html.index("</svg>") + 6])
    assert [t.text for t in svg.iter(f"{NS}text") if "gap-label" in (t.get("class") or "")] == ["longest gap 11.20 s"]


def test_markup_in_the_traffic_stays_text(tmp_path: Path) -> None:
    r = Recording()
    r.call(0.0, "tools/call", {"name": "</script><script>alert(1)</script>"}, 0.1, {"content": [{"text": "<b>&amp;"}]})
    html = report_html(r.write(tmp_path / "rec.jsonl", name="<i>name</i>"), tmp_path / "report.html")
    page = Page()
    page.feed(html)
    assert [tag for tag, _ in page.tags].count("script") == 1
    assert not any(tag in ("i", "b") for tag, _ in page.tags)
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in html


def test_export_writes_the_same_page_as_report(tmp_path: Path) -> None:
    recording = claude_code_tasks(tmp_path / "rec.jsonl")
    result = CliRunner().invoke(cli, ["export", str(recording), "-o", str(tmp_path / "page.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "page.html").read_text() == report_html(recording, tmp_path / "report.html")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium, installed with apt-get on first use."""
    from support import export_peers

    try:
        return export_peers.chromium()
    except export_peers.RegistryUnreachable as exc:
        pytest.skip(str(exc))


def open_in_chromium(chromium: Path, url: str, tmp_path: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1200,2000",
        "--hide-scrollbars",
        *mode,
        url,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def console(result: subprocess.CompletedProcess[str]) -> list[str]:
    """What the page said on its console: every message (console.error included) and uncaught errors."""
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.mark.slow
def test_the_page_renders_in_chromium_without_a_console_error(chromium: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    report_html(claude_code_tasks(tmp_path / "rec.jsonl"), page)
    shot = tmp_path / "report.png"
    result = open_in_chromium(chromium, page.as_uri(), tmp_path, f"--screenshot={shot}")
    assert console(result) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000, "a real picture"
    dom = open_in_chromium(chromium, page.as_uri() + "#q=tasks/get%20T2", tmp_path, "--dump-dom")
    assert console(dom) == []
    assert "12 of 30 shown" in dom.stdout, "the script ran and the link's filter applied: T2's 6 polls, 6 answers"
    assert len(re.findall(r'<details class="[^"]* hidden"', dom.stdout)) == 30 - 12
    assert "<svg" in dom.stdout and "longest gap 11.20 s" in dom.stdout


@pytest.mark.slow
def test_a_console_error_would_be_caught(chromium: Path, tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><p>x</p><script>console.error('boom'); notAFunction();</script>")
    lines = console(open_in_chromium(chromium, page.as_uri(), tmp_path, "--dump-dom"))
    assert any("boom" in line for line in lines) and any("Uncaught ReferenceError" in line for line in lines)


def test_a_session_folder_is_one_page_one_timeline_with_a_lane_per_server(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    claude_code_tasks(folder / "reports.jsonl")
    claude_code_tasks(folder / "other.jsonl")
    servers = [
        {"name": name, "transport": "stdio", "recording": f"{name}.jsonl", "messages": 26}
        for name in ("reports", "other")
    ]
    (folder / "manifest.json").write_text(json.dumps({"kind": "wiretap-session", "servers": servers}))
    exported = CliRunner().invoke(cli, ["export", str(folder), "--format", "html"])
    assert exported.exit_code == 0, exported.output
    assert exported.output.count('<section class="recording"') == 1 and exported.output.count("<svg") == 1
    assert "<th>server</th>" in exported.output
    reported = CliRunner().invoke(cli, ["report", str(folder), "--format", "html"])
    assert reported.exit_code == 0 and reported.output.count('<section class="recording"') == 1
    svg = CliRunner().invoke(cli, ["export", str(folder), "--format", "svg"])
    assert svg.exit_code == 0
    lanes = [g.get("data-title") for g in ET.fromstring(svg.output).iter(f"{NS}g") if g.get("data-title")]
    assert lanes == [
        "task T1 (build_report)",
        "task T1 (build_report)",
        "task T2 (build_report)",
        "task T2 (build_report)",
        "reports: stdio",
        "other: stdio",
    ]
    refused = CliRunner().invoke(cli, ["export", str(folder), "--format", "mermaid"])
    assert refused.exit_code == 2
    assert "is a session folder: export one of its recordings as mermaid" in refused.stderr
    assert str(folder / "reports.jsonl") in refused.stderr
