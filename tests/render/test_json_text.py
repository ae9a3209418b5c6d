import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiretap.render.json_text import indented

AWKWARD = {
    "floats": [1e-05, 1e16, 1e22, 0.1 + 0.2, -0.0, 123456789.123456789, 5e-324, 1.7976931348623157e308],
    "ints": [2**70, -(2**63), 0, True, False, None],
    "empty": [{}, [], [[]], {"x": {}}],
    "text": 'é\u2028\x00\x1f"\\/ a, b: c [x] {y}',
    1: "a key that is not a string",
}


def test_an_awkward_document_is_written_as_the_stdlib_writes_it() -> None:
    assert indented(AWKWARD) == json.dumps(AWKWARD, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_document_with_a_number_json_cannot_hold_takes_the_stdlibs_way(value: float) -> None:
    document = {"latency": [value, 1.5]}
    assert indented(document) == json.dumps(document, indent=2, ensure_ascii=False)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300)
@given(json_values)
def test_any_json_value_is_written_byte_for_byte_as_the_stdlib_writes_it(document: object) -> None:
    assert indented(document) == json.dumps(document, indent=2, ensure_ascii=False)
