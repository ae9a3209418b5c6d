"""The answers the forward proxy gives itself before a request reaches any origin (a refusal, a 502)."""

from __future__ import annotations

NEED_CREDENTIAL = b'Proxy-Authenticate: Basic realm="wiretap"\r\n'


def plain_answer(status: int, reason: str, text: str, extra: bytes = b"") -> bytes:
    """A complete ``text/plain`` response that closes the connection; ``extra`` holds more header lines."""
    body = text.encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )
