"""The behaviour's steps are folded as they close, exactly as folding the whole list at the end would."""

from __future__ import annotations

import random

from wiretap.analysis.behaviour import Step
from wiretap.analysis.observe import StepRuns


def folded_at_the_end(raw: list[tuple[str, ...]]) -> tuple[Step, ...]:
    out: list[Step] = []
    n = 0
    while n < len(raw):
        if out and out[-1].items == raw[n]:
            out[-1] = Step(raw[n], repeated=True)
            n += 1
        elif len(out) >= 2 and (out[-2].items, out[-1].items) == tuple(raw[n : n + 2]):
            out[-1] = Step(out[-1].items, repeated=True)
            n += 2
        else:
            out.append(Step(raw[n]))
            n += 1
    return tuple(out)


def folded_as_they_close(raw: list[tuple[str, ...]]) -> tuple[Step, ...]:
    runs = StepRuns()
    for items in raw:
        runs.add(items)
    return runs.finish()


def test_folding_as_steps_close_equals_folding_the_whole_list_for_random_sequences() -> None:
    alphabet = [("→ tasks/get",), ("← notifications/progress",), ("→ tools/call",), ("→ a", "→ b")]
    rng = random.Random(24)
    for _ in range(3000):
        raw = [rng.choice(alphabet[: rng.randint(1, 4)]) for _ in range(rng.randint(0, 14))]
        assert folded_as_they_close(raw) == folded_at_the_end(raw), raw


def test_a_pair_cut_short_by_the_end_keeps_its_last_step() -> None:
    a, b = ("→ a",), ("→ b",)
    assert folded_as_they_close([a, b, a]) == (Step(a), Step(b), Step(a))
    assert folded_as_they_close([a, b, a, b, a, b]) == (Step(a), Step(b, repeated=True))
    assert folded_as_they_close([a, b, a, b, a]) == (Step(a), Step(b, repeated=True), Step(a))


def test_a_million_polls_keep_one_step() -> None:
    runs = StepRuns()
    for _ in range(1_000_000):
        runs.add(("→ tasks/get",))
    assert len(runs.copy().finish()) == 1 and runs.finish() == (Step(("→ tasks/get",), repeated=True),)
