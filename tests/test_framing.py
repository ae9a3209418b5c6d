from hypothesis import given
from hypothesis import strategies as st

from wiretap.wire.framing import LineFramer


def frames_of(chunks: list[bytes]) -> tuple[list[bytes], bytes | None]:
    framer = LineFramer()
    frames = [bytes(f) for chunk in chunks for f in framer.feed(chunk)]
    last = framer.close()
    return frames, None if last is None else bytes(last)


def test_a_line_split_across_reads_comes_out_whole() -> None:
    assert frames_of([b'{"a"', b":1", b"}\n"]) == ([b'{"a":1}'], None)


def test_many_lines_in_one_read_come_out_in_order() -> None:
    assert frames_of([b"one\ntwo\nthree\n"]) == ([b"one", b"two", b"three"], None)


def test_a_last_line_without_newline_is_returned_at_close() -> None:
    assert frames_of([b"one\ntw", b"o"]) == ([b"one"], b"two")


def test_empty_lines_are_frames_too() -> None:
    assert frames_of([b"\n\nx\n"]) == ([b"", b"", b"x"], None)


def test_a_byte_at_a_time_gives_the_same_frames() -> None:
    data = b'{"jsonrpc":"2.0"}\nnot json\n\xff\xfe\n'
    assert frames_of([bytes([b]) for b in data]) == ([b'{"jsonrpc":"2.0"}', b"not json", b"\xff\xfe"], None)


def test_pending_counts_bytes_since_the_last_newline() -> None:
    framer = LineFramer()
    framer.feed(b"abc\nde")
    assert framer.pending == 2


@given(st.binary(max_size=2000), st.lists(st.integers(min_value=1, max_value=64), max_size=60))
def test_any_chunking_of_any_bytes_reassembles_to_the_same_frames(data: bytes, cuts: list[int]) -> None:
    chunks, rest = [], data
    for size in cuts:
        chunks.append(rest[:size])
        rest = rest[size:]
    chunks.append(rest)
    frames, last = frames_of(chunks)
    expected = data.split(b"\n")
    tail = expected.pop()
    assert frames == expected
    assert last == (tail or None)
    assert b"\n".join([*frames, last or b""]) == data
