"""The authorization flow in a report: its steps in order, the resource, the authorization server, the
grants and refreshes, and findings for what goes wrong in practice (metadata for another URL, a
discovery 404, a failed refresh, an OAuth-protected server behind a reverse proxy)."""

from __future__ import annotations

from typing import Any

from wiretap.analysis.findings import Findings
from wiretap.analysis.oauth import OAuthWatch

RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com/"
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
CHALLENGE = f'Bearer error="invalid_token", resource_metadata="{METADATA_URL}"'


class Flow:
    """Events as a recording holds them, one exchange at a time."""

    def __init__(self, listen: str, mode: str | None = "forward") -> None:
        self.events: list[dict[str, Any]] = [{"t": 0.0, "kind": "listen", "url": listen, "upstream": listen}]
        if mode:
            self.events[0]["mode"] = mode
        self.ex = 0

    def exchange(
        self, method: str, path: str, status: int, *, request: Any = None, response: Any = None, headers: Any = None
    ) -> Flow:
        self.ex += 1
        t = self.ex / 10
        ex = self.ex
        self.events.append({"t": t, "kind": "http_request", "ex": ex, "method": method, "path": path, "query": None})
        if request is not None:
            self.events.append(
                {
                    "t": t,
                    "kind": "message",
                    "dir": "c2s",
                    "ex": ex,
                    ("raw" if isinstance(request, str) else "msg"): request,
                }
            )
        self.events.append({"t": t, "kind": "http_response", "ex": ex, "status": status, "headers": headers or {}})
        if response is not None:
            self.events.append({"t": t, "kind": "message", "dir": "s2c", "ex": ex, "msg": response})
        self.events.append({"t": t, "kind": "http_end", "ex": ex, "outcome": "complete"})
        return self

    def report(self) -> tuple[Any, list[str]]:
        watch, findings = OAuthWatch(), Findings()
        for event in self.events:
            watch.feed(event)
        row = watch.finish(findings)
        return row, [f.code for f in findings.all()]


def _resource_side(listen: str, resource: str = RESOURCE, mode: str | None = "forward") -> Flow:
    flow = Flow(listen, mode)
    flow.exchange("POST", "/mcp", 401, headers={"www-authenticate": CHALLENGE})
    metadata = {"resource": resource, "authorization_servers": [ISSUER], "scopes_supported": ["mcp:tools"]}
    return flow.exchange("GET", "/.well-known/oauth-protected-resource/mcp", 200, response=metadata)


def test_the_resource_side_names_the_resource_and_its_authorization_server() -> None:
    row, codes = _resource_side("https://mcp.example.com").report()
    assert [(s.step, s.status) for s in row.steps] == [("challenge", 401), ("resource metadata", 200)]
    assert (row.resource, row.authorization_servers, row.scopes) == (RESOURCE, [ISSUER], ["mcp:tools"])
    assert codes == []


def test_the_authorization_server_side_shows_each_step_in_order_and_every_refresh() -> None:
    flow = Flow("https://auth.example.com")
    metadata = {"issuer": ISSUER, "registration_endpoint": f"{ISSUER}reg", "token_endpoint": f"{ISSUER}oauth/token"}
    flow.exchange("GET", "/.well-known/oauth-authorization-server", 200, response=metadata)
    flow.exchange("POST", "/reg", 201, request={"client_name": "c"}, response={"client_id": "c1"})
    flow.exchange("GET", "/authorize", 302)
    token = {"access_token": "[redacted:0001]", "scope": "mcp:tools"}
    form = f"grant_type=authorization_code&code=[redacted:0002]&resource={RESOURCE}"
    flow.exchange("POST", "/oauth/token", 200, request=form, response=token)
    flow.exchange("POST", "/oauth/token", 200, request="grant_type=refresh_token&refresh_token=[redacted:0003]")
    row, codes = flow.report()
    steps = [s.step for s in row.steps]
    assert steps == ["server metadata", "registration", "authorization", "token", "refresh"]
    assert row.grants == ["authorization_code", "refresh_token"]
    assert row.refreshed == [0.5]
    assert (row.resource, row.authorization_servers) == (RESOURCE, [ISSUER])
    assert codes == []


def test_metadata_for_another_url_than_the_client_used_is_an_error() -> None:
    _, codes = _resource_side("https://mcp.example.com", resource="https://elsewhere.example.com/mcp").report()
    assert codes == ["oauth-resource-mismatch"]


def test_a_reverse_proxy_in_front_of_a_protected_server_gets_the_mismatch_and_the_advice_to_go_forward() -> None:
    _, codes = _resource_side("http://127.0.0.1:4000/mcp", mode=None).report()
    assert codes == ["oauth-resource-mismatch", "oauth-through-reverse-proxy"]


def test_a_discovery_404_and_a_failed_refresh_are_errors_with_the_servers_reason() -> None:
    flow = Flow("https://auth.example.com")
    flow.exchange("GET", "/.well-known/oauth-authorization-server", 404)
    refused = {"error": "invalid_grant", "error_description": "refresh token expired"}
    flow.exchange("POST", "/token", 400, request="grant_type=refresh_token&refresh_token=x", response=refused)
    row, codes = flow.report()
    assert codes == ["oauth-discovery-404", "oauth-refresh-failed"]
    assert row.steps[-1].detail == "invalid_grant: refresh token expired"


def test_a_recording_without_oauth_has_no_authorization_section() -> None:
    flow = Flow("https://mcp.example.com")
    flow.exchange("POST", "/mcp", 200, request={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert flow.report() == (None, [])


def _analysed(status: int) -> list[str]:
    from wiretap.analysis.report import Analysis

    analysis = Analysis("http")
    call = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    for event in (
        {"t": 0.1, "kind": "http_request", "ex": 1, "method": "POST", "path": "/mcp", "query": None, "headers": {}},
        {"t": 0.1, "kind": "message", "dir": "c2s", "ex": 1, "msg": call},
        {"t": 0.2, "kind": "http_response", "ex": 1, "status": status, "headers": {"www-authenticate": CHALLENGE}},
        {"t": 0.2, "kind": "message", "dir": "s2c", "ex": 1, "msg": {"error": "invalid_token"}},
        {"t": 0.2, "kind": "http_end", "ex": 1, "outcome": "complete"},
    ):
        analysis.feed(event)
    report = analysis.report({"name": "s", "transport": "http"}, "rec.jsonl", 0)
    return [f.code for f in report.findings]


def test_a_request_refused_with_a_401_is_answered_not_left_unanswered() -> None:
    assert "unanswered-request" not in _analysed(401)
    assert "unanswered-request" in _analysed(200)  # (a 200 whose body answers nothing still leaves it waiting)
