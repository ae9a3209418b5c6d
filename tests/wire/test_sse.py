import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from wiretap.wire import sse
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


def _event_text(data_lines: list[bytes], end: bytes, named: bool) -> bytes:
    lines = [b"data: " + line for line in data_lines] + ([b"event: x"] if named else [])
    return b"".join(line + end for line in lines) + end


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from([b"", b"ab", b"x" * 40, b"y" * 200]), min_size=1, max_size=5),
            st.sampled_from([b"\n", b"\r\n", b"\r"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(1, 300), min_size=1, max_size=6),
)
def test_an_event_over_the_limit_comes_out_truncated_with_its_first_data_and_its_size(
    events: list[tuple[list[bytes], bytes, bool]], reads: list[int]
) -> None:
    limit, preview = 150, 10
    stream = b"".join(_event_text(*event) for event in events)
    chunks, at = [], 0
    while at < len(stream):
        size = max(reads[len(chunks) % len(reads)], len(stream) // 500)  # (500 reads at most)
        chunks.append(stream[at : at + size])
        at += size
    whole = decode(*chunks)
    limited, kept_preview = SSEDecoder(limit), sse.PREVIEW
    try:
        sse.PREVIEW = preview
        cut = [e for chunk in chunks for e in limited.feed(chunk)] + limited.close()
    finally:
        sse.PREVIEW = kept_preview
    assert len(cut) == len(whole) == len(events)
    for event, full, short in zip(events, whole, cut, strict=True):
        size = len(_event_text(*event))
        if size <= limit:
            assert short == full
        else:  # (the lines after the limit are only counted: a late event name is not kept)
            assert short.size == size and short.data == (full.data or b"")[:preview] and short.complete


def test_a_data_line_that_never_ends_is_held_up_to_the_limit_then_only_counted() -> None:
    decoder = SSEDecoder(limit=200_000)
    assert decoder.feed(b"event: big\ndata: ") == []
    tracemalloc.start()
    try:
        for _ in range(1000):
            assert decoder.feed(b"z" * 65536) == []
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < 2 * (200_000 + 65536), "65 MB fed; the limit held, copied once as it grows"
    (event,) = decoder.feed(b"\n\n")
    assert event.size == len(b"event: big\ndata: ") + 1000 * 65536 + 2
    assert event.data == b"z" * sse.PREVIEW and event.event == "big" and event.complete
    assert decoder.feed(b"data: next\n\n")[0].data == b"next"


def test_an_event_over_the_limit_cut_off_by_the_end_of_the_stream_is_truncated_and_incomplete() -> None:
    decoder = SSEDecoder(limit=1000)
    events = decoder.feed(b"data: " + b"q" * 5000) + decoder.close()
    assert [(e.data, e.size, e.complete) for e in events] == [(b"q" * 5000, 5006, False)]
