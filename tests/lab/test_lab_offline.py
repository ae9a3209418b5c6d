"""The throwaway Claude Code home of ``wiretap lab --scripted``: first-run answers, flags, nothing of the user's."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from wiretap.lab.offline import API_KEY, DROPPED_PREFIXES, TASKS_FLAG, claude_env, claude_home


def test_the_home_answers_the_first_run_screens_for_the_project_in_private_files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = claude_home(tmp_path, project)
    state = json.loads((config / ".claude.json").read_text())
    assert state["hasCompletedOnboarding"] is True
    assert state["projects"] == {str(project.resolve()): {"hasTrustDialogAccepted": True}}
    assert state["customApiKeyResponses"]["approved"] == [API_KEY[-20:]]
    assert "cachedGrowthBookFeatures" not in state
    assert json.loads((config / "settings.json").read_text()) == {"enableAllProjectMcpServers": True}
    for name in (".claude.json", "settings.json"):
        assert stat.S_IMODE((config / name).stat().st_mode) == 0o600


def test_tasks_in_print_mode_seed_the_flag_cache_and_set_its_three_variables(tmp_path: Path) -> None:
    config = claude_home(tmp_path, tmp_path, tasks_in_print_mode=True)
    assert json.loads((config / ".claude.json").read_text())["cachedGrowthBookFeatures"] == {TASKS_FLAG: True}
    env = claude_env(tmp_path, "http://127.0.0.1:9", {}, tasks_in_print_mode=True)
    assert env["CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF"] == env["CLAUDE_AUTO_BACKGROUND_TASKS"] == "1"
    assert "CLAUDE_AUTO_BACKGROUND_TASKS" not in claude_env(tmp_path, "http://127.0.0.1:9", {})


def test_the_users_keys_home_and_claude_settings_do_not_reach_the_client(tmp_path: Path) -> None:
    user = {
        "HOME": "/home/someone",
        "ANTHROPIC_API_KEY": "sk-ant-real",
        "CLAUDE_CONFIG_DIR": "/home/someone/.claude",
        "AWS_SECRET_ACCESS_KEY": "x",
        "PATH": "/usr/bin",
    }
    env = claude_env(tmp_path, "http://127.0.0.1:9", user)
    assert env["HOME"] == str(tmp_path / "home")
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "home" / ".claude")
    assert env["ANTHROPIC_API_KEY"] == API_KEY and env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["PATH"] == "/usr/bin"
    assert "sk-ant-real" not in env.values() and "AWS_SECRET_ACCESS_KEY" not in env
    assert all(
        not k.startswith(DROPPED_PREFIXES)
        or k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
        or k.startswith("CLAUDE_CODE_")
        or k == "CLAUDE_CONFIG_DIR"
        for k in env
    )
