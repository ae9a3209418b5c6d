"""An MCP client on the real MCP Python SDK 2.3.0 that logs in with OAuth (discovery, dynamic registration,
PKCE, resource indicator) and calls a tool, for tests/e2e/test_forward_oauth.py.

Runs in the peer venv's python: ``mcp_sdk_oauth_client.py URL``. Nobody is at a browser: the redirect
handler fetches the authorization URL itself and takes the code from the authorization server's 302.
Its HTTP clients take the proxy and the CA bundle from the environment (HTTPS_PROXY, SSL_CERT_FILE).
Prints {"call": result, "secrets": [code, verifier, client secret, token]} as one JSON line, or
{"error": text} and exits 1.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage, oauth2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

CALLBACK = "http://localhost:8765/callback"
VERIFIERS: list[str] = []
_generate = oauth2.PKCEParameters.generate


def _kept(cls: type[oauth2.PKCEParameters]) -> oauth2.PKCEParameters:
    """The SDK's own PKCE parameters, the verifier noted (the test looks for it in the recording)."""
    params = _generate()
    VERIFIERS.append(params.code_verifier)
    return params


oauth2.PKCEParameters.generate = classmethod(_kept)  # type: ignore[method-assign,assignment]


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def run(url: str) -> dict[str, Any]:
    redirect: dict[str, str] = {}

    async def follow(authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            response = await browser.get(authorization_url)
        location = response.headers["location"]
        query = parse_qs(urlsplit(location).query)
        redirect.update({k: v[0] for k, v in query.items()})

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss"))

    metadata = OAuthClientMetadata(
        client_name="wiretap-oauth-peer",
        redirect_uris=[CALLBACK],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope="mcp:tools",
        token_endpoint_auth_method="client_secret_post",
    )
    storage = Memory()
    auth = OAuthClientProvider(url, metadata, storage, follow, callback)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(url, http_client=http), cache=None) as client,
    ):
        result = await client.call_tool("add", {"a": 2, "b": 40})
    secrets = [
        redirect.get("code"),
        *VERIFIERS,
        storage.client.client_secret if storage.client else None,
        storage.tokens.access_token if storage.tokens else None,
    ]
    return {
        "call": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "secrets": [s for s in secrets if s],
    }


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def main() -> None:
    try:
        print(json.dumps(anyio.run(run, sys.argv[1])), flush=True)
    except Exception as exc:  # the test reads the reason
        print(json.dumps({"error": "; ".join(f"{type(e).__name__}: {e}" for e in _leaves(exc))}), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
