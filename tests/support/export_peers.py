"""Third-party checkers for the export tests, installed on first use like tests/support/peers.py.

Mermaid's own parser and the HAR 1.2 JSON schemas come from npm (under .peers/), headless Chromium from
Debian. A registry that cannot be reached raises ``RegistryUnreachable`` (the tests skip, saying so);
any other failure to install is an error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support import peers

MERMAID = ["mermaid@12.3.0"]
HAR_SCHEMA = ["har-schema@2.0.0"]
CHROMIUM = Path("/usr/bin/chromium")

_OFFLINE_MARKERS = (
    "enotfound",
    "eai_again",
    "econnrefused",
    "econnreset",
    "etimedout",
    "enetunreach",
    "ehostunreach",
    "network request to",
    "temporary failure resolving",
    "could not resolve",
    "unable to connect",
    "could not connect",
    "failed to fetch",
    "connection timed out",
    "network is unreachable",
)

# Parses Mermaid documents (a JSON list on stdin) with mermaid's real parser; prints what it understood.
_MERMAID_PARSE = """
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const results = [];
for (const text of JSON.parse(Buffer.concat(chunks).toString("utf8"))) {
  try {
    const parsed = await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const out = { ok: true, type: parsed.diagramType };
    if (parsed.diagramType === "sequence") {
      out.actors = [...diagram.db.getActors().entries()].map(([id, a]) => ({ id, description: a.description }));
      out.messages = diagram.db.getMessages().map((m) => ({ from: m.from ?? null, to: m.to ?? null,
        text: m.message, type: m.type, placement: m.placement ?? null }));
    }
    results.push(out);
  } catch (error) {
    results.push({ ok: false, error: String(error.message ?? error) });
  }
}
console.log(JSON.stringify(results));
"""


class RegistryUnreachable(RuntimeError):
    """The package registry could not be reached: the tests that need it skip."""


def _offline(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _OFFLINE_MARKERS)


def _npm(name: str, packages: list[str]) -> Path:
    try:
        return peers.npm_peer(name, packages)
    except RuntimeError as exc:
        if _offline(str(exc)):
            raise RegistryUnreachable(f"the npm registry is unreachable, cannot install {packages}: {exc}") from exc
        raise


def mermaid_folder() -> Path:
    """The npm folder holding mermaid (whose parser runs under node without a browser)."""
    return _npm("mermaid-12.3.0", MERMAID).parent


def parse_mermaid(texts: list[str]) -> list[dict[str, Any]]:
    """What mermaid's parser makes of each text: {ok, type, actors, messages} or {ok: false, error}."""
    result = subprocess.run(
        ["node", "--input-type=module", "-e", _MERMAID_PARSE],
        cwd=mermaid_folder(),
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 or not result.stdout.strip():
        raise RuntimeError(f"running mermaid's parser failed:\n{result.stdout}\n{result.stderr}")
    parsed: list[dict[str, Any]] = json.loads(result.stdout.strip().splitlines()[-1])
    return parsed


def har_schemas() -> dict[str, dict[str, Any]]:
    """The HAR 1.2 JSON schemas of the har-schema package, by file name (har.json is the root)."""
    folder = _npm("har-schema-2.0.0", HAR_SCHEMA) / "har-schema" / "lib"
    return {path.name: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def chromium() -> Path:
    """Debian's chromium, installed with apt-get if it is missing."""
    if CHROMIUM.exists():
        return CHROMIUM
    if shutil.which("apt-get") is None:
        raise RuntimeError("chromium is missing and there is no apt-get to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with peers._locked("chromium"):
        if CHROMIUM.exists():
            return CHROMIUM
        update = subprocess.run(["apt-get", "update"], capture_output=True, text=True, env=env, timeout=600)
        install = subprocess.run(
            ["apt-get", "install", "-y", "chromium"],
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )
        if install.returncode != 0 or not CHROMIUM.exists():
            output = update.stdout + update.stderr + install.stdout + install.stderr
            if _offline(output):
                raise RegistryUnreachable(
                    f"Debian's package registry is unreachable, cannot install chromium:\n{output}"
                )
            raise RuntimeError(f"apt-get install chromium failed:\n{output}")
    return CHROMIUM
