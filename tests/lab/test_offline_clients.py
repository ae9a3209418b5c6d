"""The throwaway Codex and Gemini CLI homes of ``wiretap lab --scripted``: pointed at the fake model, private,
and holding nothing of the user's environment but where programs are and how text is encoded."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

from wiretap.lab.offline_clients import codex_argv, codex_env, gemini_argv, gemini_env

USERS = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "OPENAI_API_KEY": "sk-users", "HTTPS_PROXY": "http://corp:3128"}


def test_codex_gets_one_provider_the_fake_responses_api_in_a_private_home(tmp_path: Path) -> None:
    env = codex_env(tmp_path, "http://127.0.0.1:5", USERS)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    settings = tomllib.loads(config.read_text())
    assert settings["model_providers"][settings["model_provider"]]["base_url"] == "http://127.0.0.1:5/v1"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    assert "OPENAI_API_KEY" not in env and "HTTPS_PROXY" not in env
    assert env["PATH"] == "/usr/bin" and env["HOME"] == str(tmp_path / "home")


def test_gemini_gets_api_key_auth_against_the_fake(tmp_path: Path) -> None:
    env = gemini_env(tmp_path, "http://127.0.0.1:6", USERS)
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:6" and env["GEMINI_API_KEY"] != ""
    assert (tmp_path / "home" / ".gemini" / "settings.json").is_file()
    assert "OPENAI_API_KEY" not in env


def test_the_clients_run_headless_with_the_prompt_last() -> None:
    assert codex_argv(["codex"], "go")[1] == "exec" and codex_argv(["codex"], "go")[-1] == "go"
    assert codex_argv(["codex", "exec", "-m", "x"], "go")[-3:] == ["-m", "x", "go"]
    assert gemini_argv(["gemini", "-y", "--debug"], "go") == ["gemini", "-y", "--debug", "-p", "go"]
