"""The relay-to-recorder pipe format: records come out whole and in order, however the pipe splits them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wiretap.recording import channel
from wiretap.recording.channel import Op, RecordDecoder


@given(payloads=st.lists(st.binary(max_size=300), max_size=20), cuts=st.lists(st.integers(1, 50), max_size=40))
def test_records_decode_whole_and_in_order_whatever_the_read_sizes(payloads: list[bytes], cuts: list[int]) -> None:
    wire = b"".join(channel.encode(Op.DATA, n, n / 10, p) for n, p in enumerate(payloads))
    decoder, got, at = RecordDecoder(), [], 0
    for cut in [*cuts, len(wire)]:
        got += list(decoder.feed(wire[at : at + cut]))
        at += cut
    assert [(r.op, r.key, r.t, r.payload) for r in got] == [(Op.DATA, n, n / 10, p) for n, p in enumerate(payloads)]
    assert decoder.pending == 0


def test_an_unknown_record_is_skipped_and_the_next_one_read() -> None:
    wire = channel.HEAD.pack(99, 1, 0.0, 3) + b"???" + channel.encode(Op.CLOSED, 7, 1.5)
    [record] = list(RecordDecoder().feed(wire))
    assert (record.op, record.key, record.t, record.payload) == (Op.CLOSED, 7, 1.5, b"")
