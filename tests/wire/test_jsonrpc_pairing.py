"""``wire.jsonrpc.Pairing``: requests waiting per direction and id, answered first come first served, the
request of the response's own exchange first, counted, and the longest waiting one found to give up on."""

from __future__ import annotations

from wiretap.wire.jsonrpc import C2S, S2C, Pairing


def test_a_response_answers_the_request_sent_the_other_way_with_the_same_id() -> None:
    pairing: Pairing[str] = Pairing()
    pairing.open(C2S, 1, "client asks")
    pairing.open(S2C, 1, "server asks")
    assert pairing.take(S2C, 1) == "client asks"
    assert pairing.take(C2S, 1) == "server asks"
    assert len(pairing) == 0


def test_ids_one_and_the_string_one_and_true_are_three_requests() -> None:
    pairing: Pairing[str] = Pairing()
    for msg_id in (1, "1", True):
        pairing.open(C2S, msg_id, repr(msg_id))
    assert [pairing.take(S2C, msg_id) for msg_id in (True, "1", 1)] == ["True", "'1'", "1"]


def test_two_requests_with_one_id_are_both_kept_and_answered_in_order() -> None:
    pairing: Pairing[str] = Pairing()
    pairing.open(C2S, 7, "first")
    pairing.open(C2S, 7, "second")
    assert len(pairing) == 2
    assert pairing.take(S2C, 7) == "first"
    assert pairing.waiting() == ["second"]


def test_over_http_the_request_of_the_responses_own_exchange_wins() -> None:
    pairing: Pairing[str] = Pairing()
    pairing.open(C2S, 1, "exchange 3", ex=3)
    pairing.open(C2S, 1, "exchange 4", ex=4)
    assert pairing.take(S2C, 1, ex=4) == "exchange 4"
    assert pairing.in_exchange(4) == []


def test_an_error_with_a_null_id_answers_the_request_of_its_exchange() -> None:
    pairing: Pairing[str] = Pairing()
    pairing.open(C2S, 5, "unreadable", ex=9)
    assert pairing.take(S2C, None, ex=9) is None
    assert pairing.take(S2C, None, ex=9, error=True) == "unreadable"


def test_the_first_waiting_is_the_oldest_and_closing_it_counts() -> None:
    pairing: Pairing[int] = Pairing()
    for n in range(3):
        pairing.open(C2S, n, n)
    first = pairing.first()
    assert first is not None and first.item == 0
    pairing.close(first)
    pairing.close(first)
    assert len(pairing) == 2
    assert [w.item for w in [pairing.first()] if w] == [1]
    assert Pairing().first() is None
