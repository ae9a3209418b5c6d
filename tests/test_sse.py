from hypothesis import given
from hypothesis import strategies as st

from wiretap.wire.sse import SSEDecoder, SSEEvent


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.close()


def test_an_event_is_dispatched_at_its_blank_line_not_before() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'event: message\ndata: {"a":1}\n') == []
    (event,) = decoder.feed(b"\n")
    assert (event.event, event.data, event.complete) == ("message", b'{"a":1}', True)


def test_crlf_lf_and_cr_line_endings_all_work_even_split_across_chunks() -> None:
    for stream in (b"data: x\r\n\r\n", b"data: x\n\n", b"data: x\r\r"):
        for cut in range(len(stream) + 1):
            (event,) = decode(stream[:cut], stream[cut:])
            assert event.data == b"x", (stream, cut)


def test_multi_line_data_id_retry_and_comments_are_kept() -> None:
    (event,) = decode(b": ping - 2026\nid: s1_7\nretry: 3000\ndata: line one\ndata:line two\n\n")
    assert event.data == b"line one\nline two"
    assert (event.id, event.retry, event.comments) == ("s1_7", 3000, ["ping - 2026"])


def test_a_priming_event_has_an_id_and_empty_data() -> None:
    (event,) = decode(b"id: p0\ndata: \n\n")
    assert (event.id, event.data) == ("p0", b"")


def test_an_event_without_data_is_still_reported() -> None:
    (event,) = decode(b"event: endpoint\n\n")
    assert event.event == "endpoint" and event.data is None


def test_comments_alone_dispatch_nothing() -> None:
    assert decode(b": keep-alive\n\n: again\n\n") == []


def test_a_leading_byte_order_mark_is_ignored_even_split() -> None:
    (event,) = decode(b"\xef\xbb", b"\xbfdata: a\n\n")
    assert event.data == b"a"


def test_an_event_cut_off_by_the_end_of_the_stream_is_marked_incomplete() -> None:
    (event,) = decode(b'data: {"partial"')
    assert event.data == b'{"partial"' and not event.complete


@given(st.lists(st.text(alphabet='abc{}:" ', max_size=20), min_size=1, max_size=6), st.data())
def test_any_chunking_gives_the_same_events(lines: list[str], data: st.DataObject) -> None:
    stream = b"".join(b"data: " + line.encode() + b"\r\n\r\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert [e.data for e in decode(*chunks)] == [line.encode() for line in lines]
