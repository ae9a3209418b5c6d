"""Makes docs/otel-phoenix-trace.png: a shipped recording pushed to Arize Phoenix, its trace photographed
in Phoenix's UI by headless Chromium (Debian's, driven by Playwright). ``python tests/support/make_otel_picture.py``
(needs ``pip install playwright``; Phoenix and Chromium are installed like the tests' peers)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support import export_peers, peers  # noqa: E402
from support.phoenix_backend import running_phoenix  # noqa: E402
from wiretap.recording.events import utc_iso_ms  # noqa: E402

RECORDING = REPO / "recordings" / "core-tasks.jsonl"
PICTURE = REPO / "docs" / "otel-phoenix-trace.png"
PROJECT = "wiretap"


def photograph(url: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(export_peers.chromium()), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 900})
        page.goto(f"{url}/projects")
        page.get_by_text(PROJECT, exact=True).click()
        page.get_by_text("wiretap core-tasks", exact=True).click()
        page.get_by_text("task run_migration", exact=True).click()
        page.get_by_role("tab", name="Events").click()
        page.get_by_text("wiretap.question.opened", exact=True).click()
        page.wait_for_timeout(3000)  # the panel's fonts and layout settle
        page.screenshot(path=str(out))
        browser.close()


def recorded_now(folder: Path) -> Path:
    """The recording as if made just now: Phoenix's UI shows the last 7 days by default."""
    header, *events = RECORDING.read_text().splitlines(keepends=True)
    now = time.time_ns()
    fields = {**json.loads(header), "started": utc_iso_ms(now / 1e9), "wall_origin_ns": now}
    copy = folder / RECORDING.name
    copy.write_text(json.dumps(fields) + "\n" + "".join(events))
    return copy


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, running_phoenix(peers.phoenix(), Path(folder)) as phoenix:
        subprocess.run(
            [sys.executable, "-m", "wiretap", "otel", str(recorded_now(Path(folder))), "--endpoint", phoenix.url,
             "--resource-attributes", f"openinference.project.name={PROJECT}"],
            check=True,
        )  # fmt: skip
        phoenix.wait_for(PROJECT, 15)
        photograph(phoenix.url, PICTURE)
    print(PICTURE.relative_to(REPO))


if __name__ == "__main__":
    main()
