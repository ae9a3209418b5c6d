"""Regenerates recordings/clients/: Claude Code, Codex and Gemini CLI against the same scenario, compared.

Run from the repository root (needs the real clients, as the slow tests install them):
``python tests/scenarios/make_client_comparison.py``. Each client calls ``echo`` on the behaviour
scenario server (stdio) and ``add`` on the MCP Python SDK's Streamable HTTP server, through wiretap;
the three session folders land in recordings/clients/ with this machine's paths replaced, and
recordings/clients/README.md shows ``wiretap compare`` over them (``--readme-only``: just that).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))

from support import peers  # noqa: E402
from support.codex_gemini import claude_run, codex_run, gemini_run, sdk_http_server  # noqa: E402

OUT = REPO / "recordings" / "clients"


def _scrub(folder: Path, replacements: dict[str, str]) -> None:
    for path in folder.iterdir():
        if path.suffix in (".json", ".jsonl"):
            text = path.read_text()
            for old, new in replacements.items():
                text = text.replace(old, new)
            path.write_text(text)
        elif path.suffix == ".log":
            path.unlink()


def write_readme(names: list[str]) -> None:
    table = subprocess.run(
        [sys.executable, "-m", "wiretap", "compare", "--format", "markdown", *(str(OUT / n) for n in names)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    (OUT / "README.md").write_text(README.format(table=table))


def main() -> None:
    if sys.argv[1:] == ["--readme-only"]:
        write_readme(["claude-code", "codex", "gemini"])
        return
    with tempfile.TemporaryDirectory(prefix="wiretap-clients-") as scratch:
        root = Path(scratch)
        (root / "http").mkdir()
        with sdk_http_server(peers.mcp_sdk(), root / "http") as url:
            runs = {
                "claude-code": claude_run(root / "claude-code", url, peers.claude_code()),
                "codex": codex_run(root / "codex", url, wrapped=True),
                "gemini": gemini_run(root / "gemini", url),
            }
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        port = url.split(":")[2].split("/")[0]
        for name, run in runs.items():
            assert run.result.returncode == 0, run.describe()
            shutil.copytree(run.session, OUT / name)
            replacements = {
                str(root): "/tmp/example",
                str(TESTS): "tests",
                sys.executable: "python",
                str(Path(sys.executable).resolve()): "python",
                f"127.0.0.1:{port}": "127.0.0.1:8000",
                str(peers.PEERS_DIR): "peers",
            }
            _scrub(OUT / name, replacements)
        write_readme(list(runs))


README = """# Three MCP clients, one scenario

Claude Code 2.1.332, Codex CLI 0.171.0 and Gemini CLI 0.61.0, each run once through
`wiretap -- CLIENT …` against the same two servers: the behaviour scenario server over stdio
(`tests/scenarios/behaviour_server.py`: it asks `roots/list` and `elicitation/create` before
answering `echo`) and the MCP Python SDK 2.3.0 over Streamable HTTP (`add`), each driven offline by
a fake model API. Regenerate with `python tests/scenarios/make_client_comparison.py`.

```
wiretap compare recordings/clients/claude-code recordings/clients/codex recordings/clients/gemini
```

{table}"""


if __name__ == "__main__":
    main()
