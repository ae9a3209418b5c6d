"""Sans-IO: the OAuth authorization flow as a recording shows it (MCP authorization: RFC 9728 protected
resource metadata, RFC 8414 server metadata, dynamic registration, the token exchange and refreshes), and
what goes wrong with it in practice."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from wiretap.analysis.findings import ERROR, WARNING, Finding, Findings
from wiretap.analysis.model import AuthorizationRow, OAuthStep
from wiretap.recording.event_types import typed

PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"
_METADATA_URL = re.compile(r'resource_metadata="([^"]+)"')
SERVER_METADATA = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


@dataclass
class _Exchange:
    t: float
    method: str
    path: str
    query: str | None
    request: Any = None
    status: int | None = None
    challenge: str | None = None
    response: Any = None
    response_t: float = 0.0


def _step(ex: _Exchange, registration: set[str], token: set[str], authorize: set[str]) -> str | None:
    path = ex.path
    if ex.status == 401 and ex.challenge is not None:
        return "challenge"
    if path.startswith(PROTECTED_RESOURCE):
        return "resource metadata"
    if path.startswith(SERVER_METADATA):
        return "server metadata"
    if ex.method == "POST" and (path in registration or path.endswith("/register")):
        return "registration"
    if path in authorize or path.endswith("/authorize"):
        return "authorization"
    if ex.method == "POST" and (path in token or path.endswith("/token")):
        return "refresh" if _grant(ex) == "refresh_token" else "token"
    return None


def _grant(ex: _Exchange) -> str | None:
    return _form(ex, "grant_type")


def _form(ex: _Exchange, key: str) -> str | None:
    """A parameter of a token request (a form, or JSON)."""
    if isinstance(ex.request, str):
        values = parse_qs(ex.request).get(key)
        return values[0] if values else None
    if isinstance(ex.request, dict):
        value = ex.request.get(key)
        return value if isinstance(value, str) else None
    return None


def _why(ex: _Exchange) -> str | None:
    body = ex.response
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        description = body.get("error_description")
        return error + (f": {description}" if isinstance(description, str) else "")
    return None


class OAuthWatch:
    def __init__(self) -> None:
        self._open: dict[int, _Exchange] = {}
        self._done: list[_Exchange] = []
        self.listen_url: str | None = None
        self.forward = False

    def feed(self, recorded: dict[str, Any]) -> None:
        if "kind" not in recorded:  # (not from a reader: it skips such a line)
            return
        event, ex = typed(recorded), recorded.get("ex")
        if event["kind"] == "listen":
            self.listen_url = str(event.get("url") or "") or None
            self.forward = event.get("mode") == "forward"
            return
        if not isinstance(ex, int):
            return
        if event["kind"] == "http_request":
            query = event.get("query")
            self._open[ex] = _Exchange(
                float(event.get("t", 0.0)),
                str(event.get("method", "")),
                str(event.get("path", "")),
                query if isinstance(query, str) else None,
            )
            return
        current = self._open.get(ex)
        if current is None:
            return
        if event["kind"] == "http_response":
            current.status = event.get("status") if isinstance(event.get("status"), int) else None
            current.response_t = float(event.get("t", current.t))
            headers = event.get("headers") or {}
            value = headers.get("www-authenticate") if isinstance(headers, dict) else None
            if isinstance(value, list):  # (a repeated header: the first)
                value = value[0] if value else None
            current.challenge = value or None
        elif event["kind"] == "message":
            body = event.get("msg", event.get("raw"))
            if event.get("dir") == "c2s":
                current.request = body
            else:
                current.response = body
        elif event["kind"] == "http_end":
            self._done.append(self._open.pop(ex))

    def finish(self, findings: Findings) -> AuthorizationRow | None:
        self._done += self._open.values()
        self._open.clear()
        registration: set[str] = set()
        token: set[str] = set()
        authorize: set[str] = set()
        row = AuthorizationRow(steps=[])
        challenged: _Exchange | None = None
        for ex in sorted(self._done, key=lambda e: e.t):
            if ex.path.startswith(SERVER_METADATA) and isinstance(ex.response, dict):
                issuer = ex.response.get("issuer")
                if isinstance(issuer, str) and issuer not in row.authorization_servers:
                    row.authorization_servers.append(issuer)
                for key, into in (("registration_endpoint", registration), ("token_endpoint", token)):
                    if isinstance(ex.response.get(key), str):
                        into.add(urlsplit(ex.response[key]).path)
                if isinstance(ex.response.get("authorization_endpoint"), str):
                    authorize.add(urlsplit(ex.response["authorization_endpoint"]).path)
            step = _step(ex, registration, token, authorize)
            if step is None:
                continue
            failed = ex.status is not None and ex.status >= 400 and step != "challenge"
            detail = _why(ex) if failed else None
            row.steps.append(OAuthStep(round(ex.t, 3), step, ex.method, ex.path, ex.status, detail))
            if step == "challenge" and challenged is None:
                challenged = ex
            elif step == "resource metadata" and isinstance(ex.response, dict):
                self._metadata(row, ex, challenged, findings)
            elif step in ("token", "refresh"):
                grant = _grant(ex)
                if grant:
                    row.grants.append(grant)
                asked = _form(ex, "resource")
                if row.resource is None and asked is not None:
                    row.resource = asked
                if step == "refresh":
                    row.refreshed.append(round(ex.t, 3))
                if isinstance(ex.response, dict) and isinstance(ex.response.get("scope"), str):
                    row.scopes = ex.response["scope"].split()
            if failed:
                self._failed(step, ex, detail, findings)
        if not row.steps:
            return None
        if not self.forward and (challenged is not None or row.resource is not None):
            elsewhere = self._metadata_elsewhere(challenged)
            findings._add(
                "reverse",
                Finding(
                    "oauth-through-reverse-proxy",
                    WARNING,
                    "the server is protected by OAuth, and this recording is a reverse proxy's: clients compare the "
                    "protected resource with the URL they use (RFC 9728 §3.3), which was wiretap's" + elsewhere,
                    "Use `wiretap proxy --forward` (the client keeps the server's URL and uses wiretap as its "
                    "HTTPS_PROXY); `wiretap -- claude` does so by default.",
                    [row.steps[0].t],
                ),
            )
        return row

    def _metadata(self, row: AuthorizationRow, ex: _Exchange, challenged: _Exchange | None, findings: Findings) -> None:
        metadata = ex.response
        resource = metadata.get("resource")
        row.resource = resource if isinstance(resource, str) else row.resource
        servers = metadata.get("authorization_servers")
        if isinstance(servers, list):
            row.authorization_servers = [s for s in servers if isinstance(s, str)]
        scopes = metadata.get("scopes_supported")
        if isinstance(scopes, list) and not row.scopes:
            row.scopes = [s for s in scopes if isinstance(s, str)]
        expected = self._used_url(challenged)
        if isinstance(resource, str) and expected is not None and resource.rstrip("/") != expected.rstrip("/"):
            findings._add(
                "resource",
                Finding(
                    "oauth-resource-mismatch",
                    ERROR,
                    f"the protected resource metadata names {resource}, not {expected}, the URL the client used",
                    "RFC 9728 §3.3: a client must not use metadata whose resource differs from its URL, so the "
                    "login fails; serve the metadata for the URL clients use (or reach the server by its own URL).",
                    [round(ex.t, 3)],
                ),
            )

    def _metadata_elsewhere(self, challenged: _Exchange | None) -> str:
        if challenged is None or self.listen_url is None or challenged.challenge is None:
            return ""
        found = _METADATA_URL.search(challenged.challenge)
        if found is None:
            return ""
        named, own = urlsplit(found.group(1)), urlsplit(self.listen_url)
        if (named.scheme, named.netloc) == (own.scheme, own.netloc):
            return ""
        return f"; the 401 names its metadata at {found.group(1)}, so the client fetched it past wiretap"

    def _used_url(self, challenged: _Exchange | None) -> str | None:
        if self.listen_url is None or challenged is None:
            return None
        parts = urlsplit(self.listen_url)
        return f"{parts.scheme}://{parts.netloc}{challenged.path}"

    @staticmethod
    def _failed(step: str, ex: _Exchange, detail: str | None, findings: Findings) -> None:
        said = f" ({detail})" if detail else ""
        if step in ("resource metadata", "server metadata") and ex.status == 404:
            finding = Finding(
                "oauth-discovery-404",
                ERROR,
                f"{ex.method} {ex.path}: 404, the {step} is not where the client looked",
                "Clients look for the metadata at the well-known paths (RFC 9728 §3.1, RFC 8414 §3.1, with the "
                "resource's path appended first); serve it there, or name it in the 401's resource_metadata.",
                [round(ex.t, 3)],
            )
        elif step == "refresh":
            finding = Finding(
                "oauth-refresh-failed",
                ERROR,
                f"a token refresh failed: {ex.status}{said}",
                "The client has to log in again; check the refresh token's lifetime and the resource and scopes "
                "it asks for.",
                [round(ex.t, 3)],
            )
        else:
            finding = Finding(
                "oauth-step-failed",
                ERROR,
                f"the {step} step failed: {ex.method} {ex.path} answered {ex.status}{said}",
                "The authorization server said why; a strict server refuses a resource it did not issue the "
                "code for (RFC 8707).",
                [round(ex.t, 3)],
            )
        findings._add(f"{step} {ex.path}", finding)
