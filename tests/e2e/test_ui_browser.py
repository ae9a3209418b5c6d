"""``wiretap ui`` in a real browser: Debian's chromium, headless, driven by Playwright.

A scenario client and server make traffic over several seconds (a task polled, a question opened and
answered) while the page is open: rows, lanes and verdicts must appear as it happens. Then filters,
links between a request and its response, ``#q=`` links, and a recording of 100k messages of which
the page holds only what it shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import paths
from support.uirun import ui, write_recording

pytestmark = pytest.mark.slow

SCENARIOS = paths.SCENARIOS
RECORDINGS = paths.RECORDINGS
WAIT_MS = 60_000
"""Playwright's wait for a condition: generous; nothing here asserts how fast."""


def expect(target: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from support import export_peers

    try:
        chromium = export_peers.chromium()
        from playwright.sync_api import sync_playwright
    except (export_peers.RegistryUnreachable, ImportError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no headless chromium with Playwright: {exc}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.set_default_timeout(WAIT_MS)
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=WAIT_MS)
    yield opened
    context.close()
    assert problems == [], "the page logged errors (a CSP violation would show here)"


def leave(page: Any) -> None:
    """Close the push stream before the server stops, so that its end is not an error in the page."""
    page.goto("about:blank")


def rows_settle(page: Any, condition: str) -> None:
    """Wait until every row shown meets ``condition`` (JS, of ``row``): the count can change a moment
    before the rows of a new filter replace the old ones."""
    page.wait_for_function(
        "() => { const rows = [...document.querySelectorAll('#rows .row:not(.pending)')];"
        f" return rows.length > 0 && rows.every((row) => {condition}); }}"
    )


def rows_shown(page: Any) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        "#rows .row:not(.pending)",
        "rows => rows.map(r => ({id: r.dataset.id, lane: r.dataset.lane,"
        " method: r.querySelector('.method').textContent,"
        " error: r.classList.contains('error'), open: r.classList.contains('open')}))",
    )


def test_rows_lanes_and_verdicts_appear_while_the_scenario_runs(page: Any, tmp_path: Path) -> None:
    recording = tmp_path / "core-tasks.jsonl"
    with ui(recording, "--beside") as url:
        page.goto(url)
        page.wait_for_selector("#live.on")
        client = subprocess.Popen(
            [sys.executable, str(SCENARIOS / "mcp_task_client.py"), "core-tasks", str(recording)],
            stdout=subprocess.PIPE,
            text=True,
        )
        with client:
            page.wait_for_selector("#rows .row .method:text-is('tools/call')")
            assert client.poll() is None, "the first call shows while the client is still at work"
            page.wait_for_selector("figure.timeline svg g.lane.task")
            assert client.poll() is None, "the task's lane is drawn while the client is still at work"
            seen_while_running = page.locator("#rows .row:not(.pending)").count()
            client.wait(120)
        assert client.returncode == 0
        events = len(recording.read_bytes().splitlines()) - 1
        expect(page.locator("#count")).to_have_text(f"{events} of {events} shown")
        assert 0 < seen_while_running < events
        page.wait_for_selector(".verdict.elicitation_gaps >> text=longest gap in polling")
        page.wait_for_selector("figure.timeline svg g.lane.task .mark.answer")
        assert page.locator("figure.timeline svg g.lane.task rect.question").count() == 1
        assert (page.locator("figure.timeline svg text.gap-label").text_content() or "").startswith("longest gap")
        page.wait_for_selector("figure.timeline svg g.moment.client-exit")
        expect(page.locator(".verdict.cancel_on_exit p")).to_contain_text("with no live task")
        page.locator("#rows .row .method:text-is('elicitation/create')").first.click()
        page.wait_for_selector("#rows .row.open pre >> text=Which environment")
        shot = tmp_path / "ui-live.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
        leave(page)


def test_filters_links_and_a_q_link_narrow_the_list(page: Any, tmp_path: Path) -> None:
    recording = tmp_path / "failed-poll-run.jsonl"
    shutil.copy(RECORDINGS / "failed-poll-run.jsonl", recording)
    with ui(recording) as url:
        page.goto(url + "#q=tasks/get")
        expect(page.locator("#count")).to_have_text(re.compile("^10 of "))
        rows_settle(page, "row.querySelector('.method').textContent === 'tasks/get'")
        assert page.input_value("#q") == "tasks/get"
        assert {r["method"] for r in rows_shown(page)} == {"tasks/get"}
        page.fill("#q", "")
        page.fill("#m", "tasks/*")
        expect(page).to_have_url(re.compile(r"#m=tasks%2F\*$"))
        rows_settle(page, "row.querySelector('.method').textContent.startsWith('tasks/')")
        assert all(r["method"].startswith("tasks/") for r in rows_shown(page))
        page.select_option("#dir", "OUT")
        page.check("#err")
        expect(page.locator("#count")).to_have_text(re.compile("^3 of "))
        rows_settle(page, "row.classList.contains('error') && row.dataset.lane === 'OUT'")
        shown = rows_shown(page)
        assert len(shown) == 3 and all(r["error"] and r["lane"] == "OUT" for r in shown)
        page.uncheck("#err")
        page.select_option("#dir", "IN")
        expect(page.locator("#count")).to_have_text(re.compile("^5 of "))
        rows_settle(page, "row.dataset.lane === 'IN'")
        request = rows_shown(page)[0]
        page.locator(f"#rows .row[data-id='{request['id']}']").click()
        page.locator("#rows .row.open a.pair").click()
        expect(page.locator("#m")).to_have_value("")
        page.wait_for_selector("#rows .row.open[data-lane='OUT']")
        answer = next(r for r in rows_shown(page) if r["open"])
        assert answer["method"] == "tasks/get" and int(answer["id"]) > int(request["id"])
        assert "-32603" in page.locator("#rows .row.open pre").inner_text()
        page.focus("#list")
        page.keyboard.press("ArrowDown")
        expect(page.locator("#rows .row.open")).to_have_attribute("data-id", str(int(answer["id"]) + 1))
        page.keyboard.press("Escape")
        expect(page.locator("#rows .row.open")).to_have_count(0)
        leave(page)


def test_a_recording_of_100k_messages_opens_with_only_a_window_of_rows_in_the_page(page: Any, tmp_path: Path) -> None:
    recording = write_recording(tmp_path / "big.jsonl", 50_000, every_error=1000)
    with ui(recording) as url:
        page.goto(url)
        expect(page.locator("#count")).to_have_text("100000 of 100000 shown")
        page.uncheck("#tail")
        page.eval_on_selector("#list", "list => { list.scrollTop = 50000 * 22; }")
        page.wait_for_selector("#rows .row[data-id='50010']")
        assert page.locator("#rows .row").count() < 100, "the page holds what it shows, not every message"
        page.locator("#rows .row[data-id='50010']").click()
        page.wait_for_selector("#rows .row.open[data-id='50010'] pre >> text=task-1")
        opened = page.locator("#rows .row[data-id='50010']").bounding_box()
        below = page.locator("#rows .row[data-id='50011']").bounding_box()
        assert opened and below and below["y"] >= opened["y"] + opened["height"] - 1, "the rows below make room"
        page.eval_on_selector("#list", "list => { list.scrollTop += 3000; }")
        page.wait_for_selector("#rows .row[data-id='50150']")
        assert page.locator("#rows .row").count() < 100
        held = page.evaluate("document.getElementsByTagName('*').length")
        assert held < 2000
        page.fill("#q", "task-3")
        # The request names the task, and so does its answer unless the answer is an error.
        mentions = sum(1 + (n % 1000 != 0) for n in range(50_000) if n % 7 == 3)
        expect(page.locator("#count")).to_have_text(f"{mentions} of 100000 shown")
        page.fill("#q", "")
        page.check("#err")
        expect(page.locator("#count")).to_have_text("50 of 100000 shown")
        assert {r["method"] for r in rows_shown(page)} == {"tasks/get"}
        leave(page)


def session_folder(folder: Path, servers: dict[str, str]) -> Path:
    """A finished session of recordings from recordings/, one server each."""
    folder.mkdir(parents=True)
    entries = []
    for name, recording in servers.items():
        shutil.copy(RECORDINGS / recording, folder / f"{name}.jsonl")
        entries.append({"name": name, "transport": "stdio", "recording": f"{name}.jsonl", "messages": None})
    manifest = {"kind": "wiretap-session", "format": 1, "client": "claude", "running": False, "servers": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_folder_of_sessions_opens_the_newest_with_a_lane_set_per_server_and_switches(
    page: Any, tmp_path: Path
) -> None:
    root = tmp_path / "wiretap-sessions"
    session_folder(root / "20261201T090000.000Z", {"alpha": "core-tasks.jsonl"})
    session_folder(root / "20261201T100000.000Z", {"beta": "failed-poll-run.jsonl", "gamma": "unknown-task.jsonl"})
    with ui(root) as url:
        page.goto(url)
        expect(page.locator("#title")).to_have_text("20261201T100000.000Z")
        expect(page.locator("figure.timeline")).to_have_count(2)
        assert [f.get_attribute("data-server") for f in page.locator("figure.timeline").all()] == ["beta", "gamma"]
        assert page.locator("figure.timeline[data-server=gamma] svg g.lane.task").count() == 1
        page.select_option("#server", label="gamma (gamma.jsonl)")
        expect(page.locator("#count")).to_have_text(re.compile(r"^\d+ of "))
        assert {r["method"] for r in rows_shown(page)} >= {"tasks/get"}
        assert page.locator("#rows .row .srv:text-is('beta')").count() == 0
        page.select_option("#sessions", "20261201T090000.000Z")
        expect(page.locator("#title")).to_have_text("20261201T090000.000Z")
        expect(page.locator("figure.timeline")).to_have_count(1)
        assert "?session=20261201T090000.000Z" in page.url
        leave(page)


def test_markup_in_the_traffic_stays_text_in_the_list_the_json_and_the_timeline(page: Any, tmp_path: Path) -> None:
    hostile = '</script><img src=x onerror="document.title=`owned`"><script>document.title="owned"</script>'
    recording = write_recording(tmp_path / "rec.jsonl", 1)
    with recording.open("a") as f:
        call = {"jsonrpc": "2.0", "id": 99, "method": hostile, "params": {"name": hostile}}
        f.write(json.dumps({"t": 0.5, "kind": "message", "dir": "c2s", "msg": call}) + "\n")
        f.write(json.dumps({"t": 0.6, "kind": "stderr", "text": hostile}) + "\n")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with ui(recording, "--listen", "localhost:0") as url:
        page.goto(url)
        page.wait_for_selector("figure.timeline svg")
        expect(page.locator("#rows .row .method").nth(2)).to_have_text(hostile)
        page.locator("#rows .row").nth(3).click()
        expect(page.locator("#rows .row.open pre")).to_contain_text("onerror")
        assert page.locator("#rows img, #verdicts img, #tables img, figure img").count() == 0
        assert page.title() == "wiretap ui" and dialogs == []
        leave(page)
