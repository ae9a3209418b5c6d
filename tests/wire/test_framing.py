import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from wiretap.wire.framing import PREVIEW, Cut, LineFramer


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


def cut_frames(chunks: list[bytes], limit: int) -> tuple[list[tuple[str, bytes, int]], tuple[str, bytes, int] | None]:
    framer = LineFramer(limit)
    frames = [_described(f) for chunk in chunks for f in framer.feed(chunk)]
    last = framer.close()
    return frames, None if last is None else _described(last)


def _described(frame: bytes | bytearray) -> tuple[str, bytes, int]:
    return ("cut", bytes(frame), frame.size) if isinstance(frame, Cut) else ("whole", bytes(frame), len(frame))


def _expected(line: bytes, limit: int) -> tuple[str, bytes, int]:
    return ("cut", line[:PREVIEW], len(line)) if len(line) > limit else ("whole", line, len(line))


@given(
    st.lists(st.sampled_from([0, 1, 5, 6, 70_000, 140_001]), max_size=6),
    st.lists(st.integers(1, 150_000), min_size=1, max_size=12),
    st.sampled_from([5, 100_000]),
    st.booleans(),
)
def test_a_line_over_the_limit_comes_out_cut_with_its_first_bytes_and_size_whatever_the_reads(
    lengths: list[int], reads: list[int], limit: int, ends_with_newline: bool
) -> None:
    lines = [bytes([97 + n % 26]) * length for n, length in enumerate(lengths)]
    data = b"\n".join(lines) + (b"\n" if ends_with_newline else b"")
    chunks, at = [], 0
    while at < len(data):
        size = max(reads[len(chunks) % len(reads)], len(data) // 500)  # (500 reads at most)
        chunks.append(data[at : at + size])
        at += size
    *whole, tail = data.split(b"\n")
    frames, last = cut_frames(chunks, limit)
    assert frames == [_expected(line, limit) for line in whole]
    assert last == (_expected(tail, limit) if tail else None)


def test_a_line_that_never_ends_is_held_up_to_the_limit_then_only_counted() -> None:
    framer, read = LineFramer(limit=200_000), b"x" * 65536
    tracemalloc.start()
    try:
        for _ in range(1000):
            assert framer.feed(read) == []
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < 200_000 + 3 * 65536, "65 MB read, the limit and a read or two held"
    assert framer.pending == 1000 * 65536
    (end,) = framer.feed(b"\n")
    assert isinstance(end, Cut) and end.size == 1000 * 65536 and end == b"x" * PREVIEW
    assert framer.cuts == 1 and framer.pending == 0
