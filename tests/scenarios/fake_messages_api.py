"""The scripted Messages API the Claude Code tests drive: the one ``wiretap lab --scripted`` ships."""

from wiretap.lab.messages_api import (
    Captured,
    FakeMessagesAPI,
    ToolUse,
    all_tool_results,
    background_task_id,
    last_user_tool_results,
    offered_tools,
    stop_use_id,
    tool_use_id,
)

__all__ = [
    "Captured",
    "FakeMessagesAPI",
    "ToolUse",
    "all_tool_results",
    "background_task_id",
    "last_user_tool_results",
    "offered_tools",
    "stop_use_id",
    "tool_use_id",
]
