"""OAuth's secrets in the places they pass: ``code`` is one only in a token request or an authorization
response (it is too common a key elsewhere); ``code_verifier``, tokens and ``DPoP`` always are."""

from __future__ import annotations

import json

from wiretap.recording.streams import body_message
from wiretap.wire.http.headers import recorded_headers
from wiretap.wire.redact import redact_header, redact_text, redact_url

CODE = "6ea2935c-ef9b-412d-8c1c-ab085d8ce446"


def test_the_code_in_an_authorization_responses_location_is_redacted_with_or_without_state() -> None:
    for location in (f"http://localhost:8766/callback?code={CODE}", f"https://app.example/cb?code={CODE}&state=s1"):
        shown = redact_header("location", location)
        assert CODE not in shown and shown.count("[redacted:") == 1
        assert shown.split("?")[0] == location.split("?")[0]


def test_the_code_in_a_callback_request_target_is_redacted_and_state_is_kept() -> None:
    shown = redact_url(f"/callback?code={CODE}&state=af0ifjsldkj")
    assert shown.startswith("/callback?code=[redacted:") and shown.endswith("&state=af0ifjsldkj")


def test_a_dpop_proof_header_is_redacted() -> None:
    headers = recorded_headers([("DPoP", "eyJ0eXAiOiJkcG9wK2p3dCJ9.eyJodG0iOiJQT1NUIn0.c2ln")], redact=True)
    assert headers["dpop"].startswith("[redacted:")


def test_code_elsewhere_is_left_alone() -> None:
    error = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}})
    for text in (error, "exit code=1 while the state=running", '{"code": "E_NOT_FOUND"}', "/search?code=python&page=2"):
        assert redact_text(text) == (text, 0)
    assert redact_url("/search?code=python&page=2") == "/search?code=python&page=2"


def test_a_token_request_body_in_a_recording_keeps_its_shape_and_loses_its_secrets() -> None:
    verifier = "mHppnTGAR~CX3_L86EJ2XpGHkrEAciv7J-f_AuVYoN~"
    form = f"grant_type=authorization_code&code={CODE}&code_verifier={verifier}&client_id=c1"
    events = list(body_message(0.0, {"dir": "c2s", "ex": 1}, form.encode(), redact=True))
    recorded = json.dumps(events)
    assert CODE not in recorded and "mHppnTGAR" not in recorded
    assert "grant_type=authorization_code&code=[redacted:" in recorded and "client_id=c1" in recorded
