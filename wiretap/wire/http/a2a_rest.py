"""A2A's HTTP+JSON (REST) binding: which operation a method and path stand for (PROTOCOLS.md §2.8)."""

from __future__ import annotations

import re

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (verb, re.compile(r"^(?:/[^/]+)*?" + pattern + r"$"), operation)
    for verb, pattern, operation in [
        ("POST", r"/message:send", "SendMessage"),
        ("POST", r"/message:stream", "SendStreamingMessage"),
        ("GET", r"/tasks/(?P<id>[^/:]+)", "GetTask"),
        ("GET", r"/tasks", "ListTasks"),
        ("POST", r"/tasks/(?P<id>[^/:]+):cancel", "CancelTask"),
        ("POST", r"/tasks/(?P<id>[^/:]+):subscribe", "SubscribeToTask"),
        ("GET", r"/tasks/(?P<id>[^/:]+):subscribe", "SubscribeToTask"),
        ("POST", r"/tasks/(?P<id>[^/:]+)/pushNotificationConfigs", "CreateTaskPushNotificationConfig"),
        ("GET", r"/tasks/(?P<id>[^/:]+)/pushNotificationConfigs", "ListTaskPushNotificationConfigs"),
        ("GET", r"/tasks/(?P<id>[^/:]+)/pushNotificationConfigs/[^/]+", "GetTaskPushNotificationConfig"),
        (
            "DELETE",
            r"/tasks/(?P<id>[^/:]+)/pushNotificationConfigs/[^/]+",
            "DeleteTaskPushNotificationConfig",
        ),
        ("GET", r"/extendedAgentCard", "GetExtendedAgentCard"),
        ("GET", r"/v1/card", "GetExtendedAgentCard"),
    ]
]


def rest_operation(method: str, path: str) -> tuple[str, str | None] | None:
    """``(operation, task id)`` for an A2A REST call, else None."""
    for verb, pattern, operation in _ROUTES:
        if verb == method and (match := pattern.match(path)):
            return operation, match.groupdict().get("id")
    return None
