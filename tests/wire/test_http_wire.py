"""The proxy's sans-IO HTTP/1.1 reading and writing: message boundaries, whatever the read sizes, and
ambiguous framing refused, never guessed."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from wiretap.wire.http import wire
from wiretap.wire.http.wire import (
    BODY,
    CLOSE,
    END,
    ERROR,
    HEAD,
    UPGRADE,
    BadMessage,
    Head,
    RequestParser,
    ResponseParser,
)

CHUNKED = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'7\r\n{"a":1,\r\n'
    b'A;ext=x\r\n"b":[1,2]}\r\n'
    b"0\r\nX-Trailer: t\r\n\r\n"
)
PAYLOAD = b'{"a":1,"b":[1,2]}'


def body_and_ends(events: list[wire.Event]) -> tuple[bytes, int, list[int]]:
    body = b"".join(value for kind, value in events if kind == BODY and isinstance(value, bytes))
    return body, sum(kind == END for kind, _ in events), [kind for kind, _ in events if kind not in (BODY,)]


def feed_in_pieces(parser: RequestParser | ResponseParser, data: bytes, cuts: list[int]) -> list[wire.Event]:
    events: list[wire.Event] = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        events += parser.feed(data[start:end])
    return events


@pytest.mark.parametrize("cut", range(1, len(CHUNKED)))
def test_a_chunked_body_split_at_any_byte_reads_the_same(cut: int) -> None:
    events = feed_in_pieces(RequestParser(), CHUNKED, [cut])
    body, ends, kinds = body_and_ends(events)
    assert body == PAYLOAD and ends == 1 and kinds == [HEAD, END]


def test_a_chunked_body_fed_byte_by_byte_reads_the_same_and_its_trailer_is_not_a_header() -> None:
    events = feed_in_pieces(RequestParser(), CHUNKED, list(range(1, len(CHUNKED))))
    body, ends, kinds = body_and_ends(events)
    assert body == PAYLOAD and ends == 1 and kinds == [HEAD, END]
    head = events[0][1]
    assert isinstance(head, Head) and head.chunked and head.content_length is None
    assert head.headers == [(b"Host", b"127.0.0.1:8123"), (b"Transfer-Encoding", b"chunked")]


def test_pipelined_requests_come_out_in_order_with_their_bodies() -> None:
    one = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
    two = b"GET /b HTTP/1.1\r\nHost: h\r\n\r\n"
    three = b"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n"
    events = RequestParser().feed(one + two + three)
    shown = [(kind, value.target if isinstance(value, Head) else value) for kind, value in events]
    assert shown == [
        (HEAD, "/a"),
        (BODY, b"abc"),
        (END, None),
        (HEAD, "/b"),
        (END, None),
        (HEAD, "/c"),
        (BODY, b"xy"),
        (END, None),
    ]


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "Content-Length"),
        (b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "Content-Length"),
        (b"Content-Length: 3\r\nContent-Length: 4\r\n", "Content-Length"),
        (b"Content-Length: 3\r\nContent-Length: 3\r\n", "Content-Length"),
        (b"Content-Length: +3\r\n", "Content-Length"),
        (b"Content-Length: 3 4\r\n", "Content-Length"),
        (b"Transfer-Encoding: gzip\r\n", "Transfer-Encoding"),
        (b"Transfer-Encoding: chunked, identity\r\n", "Transfer-Encoding"),
        (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding"),
        (b"Transfer-Encoding : chunked\r\n", "header"),
        (b"Transfer-Encoding:\x0bchunked\r\n", "header"),
    ],
)
def test_ambiguous_framing_is_an_error_and_no_head_comes_out(head: bytes, why: str) -> None:
    data = b"POST /mcp HTTP/1.1\r\nHost: h\r\n" + head + b"\r\n3\r\nabc\r\n0\r\n\r\n"
    for cuts in ([], list(range(1, len(data)))):
        events = feed_in_pieces(RequestParser(), data, cuts)
        assert [kind for kind, _ in events if kind != BODY] == [ERROR], (head, cuts)
        bad = events[-1][1]
        assert isinstance(bad, BadMessage) and bad.status == 400 and why.lower() in bad.why.lower()


@pytest.mark.parametrize(
    "first",
    [
        b"GET / HTTP/1.1\n",  # bare LF
        b"GET /a b HTTP/1.1\r\n",
        b"GET / HTTP/9.9\r\n",
        b"GET\r\n",
        b"G\x00T / HTTP/1.1\r\n",
        b" GET / HTTP/1.1\r\n",
        b"GET / HTTP/1.1 extra\r\n",
        b"\xff\xfe / HTTP/1.1\r\n",
    ],
)
def test_a_malformed_request_line_is_an_error(first: bytes) -> None:
    events = RequestParser().feed(first + b"Host: h\r\n\r\n")
    assert [kind for kind, _ in events] == [ERROR]


def test_a_folded_or_nul_header_is_an_error() -> None:
    assert RequestParser().feed(b"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n")[-1][0] == ERROR
    assert RequestParser().feed(b"GET / HTTP/1.1\r\nHost: h\x00\r\n\r\n")[-1][0] == ERROR


def test_after_an_error_nothing_more_is_read() -> None:
    parser = RequestParser()
    assert parser.feed(b"GET /a b HTTP/1.1\r\n\r\n")[-1][0] == ERROR
    assert parser.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n") == []


def test_a_head_over_the_limit_is_refused_whole_or_trickled() -> None:
    big = b"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + b"a" * wire.MAX_HEAD + b"\r\n\r\n"
    for cuts in ([], list(range(1000, len(big), 1000))):
        events = feed_in_pieces(RequestParser(), big, cuts)
        assert [kind for kind, _ in events] == [ERROR]
        bad = events[0][1]
        assert isinstance(bad, BadMessage) and bad.status == 431


def test_a_never_ending_header_line_is_refused_before_it_ends() -> None:
    parser = RequestParser()
    events = parser.feed(b"GET / HTTP/1.1\r\nX-Slow: ")
    while not events:
        events = parser.feed(b"a" * 4096)
    assert [kind for kind, _ in events] == [ERROR]


def test_connect_and_upgrades_end_the_http_stream_after_their_head() -> None:
    events = RequestParser().feed(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n\x16\x03\x01")
    assert [kind for kind, _ in events] == [HEAD, END, CLOSE]
    events = RequestParser().feed(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\nxyz")
    assert [kind for kind, _ in events] == [HEAD, END, CLOSE]


WS_REQUEST = (
    b"GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n"
    b"Sec-WebSocket-Key: k\r\nKeep-Alive: 5\r\n\r\n"
)


def test_a_websocket_upgrade_hands_every_byte_after_its_head_on_unparsed() -> None:
    parser = RequestParser()
    events = parser.feed(WS_REQUEST + b"\x81\x02hi")
    assert [kind for kind, _ in events] == [HEAD, END, UPGRADE] and events[-1][1] == b"\x81\x02hi"
    assert parser.feed(b"GET / HTTP/1.1\r\n\r\n") == [(UPGRADE, b"GET / HTTP/1.1\r\n\r\n")]
    post = WS_REQUEST.replace(b"GET", b"POST")
    assert [kind for kind, _ in RequestParser().feed(post)] == [HEAD, END, CLOSE]


def test_a_websocket_upgrade_goes_upstream_with_its_connection_and_upgrade_headers() -> None:
    (_, head), *_ = RequestParser().feed(WS_REQUEST)
    assert isinstance(head, Head) and wire.wants_websocket(head)
    sent, _ = wire.request_head(head, b"up:1", upgrade=True)
    assert sent == (
        b"GET /ws HTTP/1.1\r\nHost: up:1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Key: k\r\n\r\n"
    )


def test_a_101_passes_every_header_and_the_bytes_after_it_unparsed() -> None:
    switch = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-A: 1\r\n\r\n"
    parser = ResponseParser()
    events = parser.feed(switch + b"\x81\x00")
    assert [kind for kind, _ in events] == [HEAD, END, UPGRADE] and events[-1][1] == b"\x81\x00"
    head = events[0][1]
    assert isinstance(head, Head) and wire.switching(head) == switch
    assert parser.feed(b"more") == [(UPGRADE, b"more")] and parser.feed_eof() == []


def test_the_upstream_head_keeps_everything_end_to_end_and_names_the_upstream_host() -> None:
    (_, head), *_ = RequestParser().feed(
        b"POST /mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
        b"Keep-Alive: 5\r\nTE: trailers\r\nMcp-Session-Id: s\r\nContent-Length: 2\r\n\r\n{}"
    )
    assert isinstance(head, Head)
    sent, chunked = wire.request_head(head, b"upstream.example:9")
    assert not chunked
    assert sent == (
        b"POST /mcp?x=1 HTTP/1.1\r\nHost: upstream.example:9\r\nMcp-Session-Id: s\r\nContent-Length: 2\r\n\r\n"
    )


def response(data: bytes, *, head_only: bool = False) -> list[wire.Event]:
    parser = ResponseParser()
    parser.head_only = head_only
    return parser.feed(data)


def test_a_head_response_ends_after_its_head_whatever_length_it_announces() -> None:
    parser = ResponseParser()
    parser.head_only = True
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    events = feed_in_pieces(parser, data, list(range(1, len(data))))
    assert [kind for kind, _ in events] == [HEAD, END]
    parser.head_only = False
    assert [kind for kind, _ in parser.feed(b"HTTP/1.1 204 No Content\r\n\r\n")] == [HEAD, END]


def test_a_head_response_after_a_100_continue_ends_once() -> None:
    data = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"
    events = response(data, head_only=True)
    assert [(kind, value.status if isinstance(value, Head) else None) for kind, value in events] == [
        (HEAD, 100),
        (END, None),
        (HEAD, 200),
        (END, None),
    ]


def test_informational_responses_come_before_the_response() -> None:
    events = response(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    heads = [value.status for kind, value in events if isinstance(value, Head)]
    assert heads == [100, 200] and body_and_ends(events)[0] == b"ok"


def test_a_response_without_length_ends_when_the_upstream_closes() -> None:
    parser = ResponseParser()
    events = parser.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome")
    events += parser.feed(b" more")
    events += parser.feed_eof()
    assert body_and_ends(events)[:2] == (b"some more", 1)


def test_a_response_cut_short_is_an_error_not_an_end() -> None:
    parser = ResponseParser()
    events = parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") + parser.feed_eof()
    assert [kind for kind, _ in events] == [HEAD, BODY, ERROR]


def test_a_response_with_both_lengths_is_an_error() -> None:
    both = b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"
    events = response(b"HTTP/1.1 200 OK\r\n" + both + b"\r\n3\r\nabc\r\n0\r\n\r\n")
    assert [kind for kind, _ in events] == [ERROR]


def test_a_chunked_or_unframed_response_goes_chunked_to_http_1_1_and_until_close_to_http_1_0() -> None:
    (_, head), *_ = response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n")
    assert isinstance(head, Head)
    to_new = wire.response_head(head, client_version="1.1", request_method="GET", close=False)
    assert to_new.head == b"HTTP/1.1 200 OK\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\n\r\n" and to_new.chunked
    to_old = wire.response_head(head, client_version="1.0", request_method="GET", close=False)
    assert to_old.head == b"HTTP/1.0 200 OK\r\nX-A: 1\r\nConnection: close\r\n\r\n" and to_old.close
    assert wire.chunk(b"hello") == b"5\r\nhello\r\n"


@pytest.mark.parametrize("redact", [True, False])
def test_headers_as_json_text_are_the_json_of_the_recorded_headers(redact: bool) -> None:
    from wiretap.wire.http.headers import HeaderRecorder, recorded_headers

    samples: list[list[tuple[bytes, bytes]]] = [
        [(b"Host", b"127.0.0.1:1"), (b"Content-Type", b"application/json")],
        [(b"Authorization", b"Bearer abcdefghijklmnop"), (b"X-Quote", b'say "hi" \\ \x7f'), (b"X-L1", "é".encode())],
        [(b"Set-Cookie", b"a=1"), (b"set-cookie", b"b=2"), (b"Accept", b"*/*")],
        [],
    ]
    record = HeaderRecorder(redact=redact)
    for headers in samples * 2:  # the second time from what it remembered
        text = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
        expected = recorded_headers(text, redact=redact)
        assert json.loads(record.json(headers)) == expected == record(headers)
        assert list(json.loads(record.json(headers))) == list(expected)  # same order


@pytest.mark.parametrize("parser_type", [RequestParser, ResponseParser])
def test_released_a_parser_lets_go_of_a_half_read_head_at_once(parser_type: type[wire.RequestParser]) -> None:
    """llhttp's parser and ours refer to each other: what a half-read head holds would otherwise wait for
    the cycle collector."""
    request = parser_type is RequestParser
    first = b"POST /mcp HTTP/1.1\r\n" if request else b"HTTP/1.1 200 OK\r\n"
    whole = b"GET / HTTP/1.1\r\n\r\n" if request else b"HTTP/1.1 204 No Content\r\n\r\n"
    parser = parser_type()
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(4):
            parser.feed(first + b"X-Pad: " + b"a" * 50_000)
            held = tracemalloc.get_traced_memory()[0]
            parser.release()
            assert tracemalloc.get_traced_memory()[0] < held - 40_000
            assert [kind for kind, _ in parser.feed(whole)] == [HEAD, END]  # (and it reads on)
    finally:
        tracemalloc.stop()
        gc.enable()
