"""Every non-task result the probe sends, in both revisions, against the real MCP Python SDK 2.3's strict
wire surface (``mcp_types.methods.validate_server_result``): a result that fails it makes the SDK's client
treat the probe as another era, or refuse the answer. The tasks extension's results are outside that
surface; the fastmcp-tasks and Claude Code tests run them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import paths

from wiretap.lab.probe.core import Probe

pytestmark = pytest.mark.slow

SCRIPT = paths.PEER_SCRIPTS / "lab_strict_results.py"
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}


def request(rid: int, method: str, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def results(modern: bool) -> list[dict[str, Any]]:
    """What the probe answers to each request a client makes, with the method each answers."""
    probe = Probe()
    meta: dict[str, Any] = {"_meta": MODERN} if modern else {}
    asked: list[tuple[str, bytes]] = []
    if not modern:
        asked.append(("initialize", request(0, "initialize", protocolVersion="2025-11-25", capabilities={})))
        asked.append(("ping", request(1, "ping")))
    else:
        asked.append(("server/discover", request(0, "server/discover", **meta)))
    for n, method in enumerate(("tools/list", "prompts/list", "resources/list", "resources/templates/list"), 2):
        asked.append((method, request(n, method, **meta)))
    calls = [
        ("slow_call", {"seconds": 0}),
        ("poll_task", {"seconds": 0}),
        ("progress_call", {"count": 0}),
        ("input_task", {"after_s": 0}),
        ("poll_task", {"seconds": -1}),
    ]
    for n, (tool, arguments) in enumerate(calls, 10):
        asked.append(("tools/call", request(n, "tools/call", name=tool, arguments=arguments, **meta)))
    by_id = {json.loads(raw)["id"]: method for method, raw in asked}
    answers = []
    for _, raw in asked:
        out = probe.receive(raw, 0.0)
        out.extend(probe.tick(0.0))
        answers += [json.loads(s.line) for s in out.sends if s.ends]
    version = "2026-07-28" if modern else "2025-11-25"
    return [{"method": by_id[a["id"]], "version": version, "result": a["result"]} for a in answers if "result" in a]


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
def test_every_result_the_probe_sends_passes_the_sdks_strict_surface(
    modern: bool, mcp_sdk_python: Path, tmp_path: Path
) -> None:
    items = results(modern)
    methods = [item["method"] for item in items]
    # A legacy inline input_task asks with requests first; its answer waits for theirs.
    assert methods.count("tools/call") == (5 if modern else 4) and len(items) == 10
    if modern:
        assert {i["result"]["resultType"] for i in items if i["method"] == "tools/call"} == {
            "complete",
            "input_required",
        }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(items))
    done = subprocess.run([str(mcp_sdk_python), str(SCRIPT), str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    assert [(m, v) for m, v in zip(methods, verdicts, strict=True) if v is not None] == []
