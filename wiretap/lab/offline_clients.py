"""Throwaway Codex and Gemini CLI homes that run offline against the lab's loopback fake model APIs
(``lab.model_apis``): the user's own configuration, credentials and keys are never read."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "WIRETAP_PEERS_DIR")
"""The only variables of the user's a scripted client gets: where programs are, and how text is encoded."""
FAKE_KEY = "sk-fake-wiretap-lab"


def _private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _base(root: Path, env: Mapping[str, str]) -> dict[str, str]:
    (root / "tmp").mkdir(exist_ok=True, mode=0o700)
    kept = {k: v for k, v in env.items() if k in KEPT}
    return kept | {"HOME": str(root / "home"), "TMPDIR": str(root / "tmp")}


def codex_env(root: Path, api_url: str, env: Mapping[str, str]) -> dict[str, str]:
    """``root/home/.codex`` with one model provider, the fake Responses API; the environment that uses it."""
    home = root / "home" / ".codex"
    provider = {"name": "wiretap-lab", "base_url": f"{api_url}/v1", "env_key": "FAKE_API_KEY", "wire_api": "responses"}
    lines = ['model = "fake-model"', 'model_provider = "wiretap_lab"', "[features]", "plugins = false"]
    lines += ["remote_plugin = false", "[model_providers.wiretap_lab]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in provider.items()]
    _private(home / "config.toml", "\n".join(lines) + "\n")
    return _base(root, env) | {"CODEX_HOME": str(home), "FAKE_API_KEY": FAKE_KEY}


def codex_argv(argv: Sequence[str], text: str) -> list[str]:
    """``codex exec`` with the lab's prompt, no approvals asked, nothing of the run kept."""
    rest = list(argv[2:] if len(argv) > 1 and argv[1] == "exec" else argv[1:])
    fixed = ["--skip-git-repo-check", "--ephemeral", "-c", "approval_policy=never", "-s", "danger-full-access"]
    return [argv[0], "exec", *fixed, *rest, text]


def gemini_env(root: Path, api_url: str, env: Mapping[str, str]) -> dict[str, str]:
    """``root/home/.gemini/settings.json`` choosing API-key auth; the environment that points at the fake."""
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    _private(root / "home" / ".gemini" / "settings.json", json.dumps(settings, indent=2))
    return _base(root, env) | {
        "GEMINI_API_KEY": FAKE_KEY,
        "GOOGLE_GEMINI_BASE_URL": api_url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def gemini_argv(argv: Sequence[str], text: str) -> list[str]:
    """``gemini -p`` with the lab's prompt and its tools approved (``-y``)."""
    rest = [arg for arg in argv[1:] if arg not in ("-p", "--prompt", "-y", "--yolo")]
    return [argv[0], "-y", *rest, "-p", text]
