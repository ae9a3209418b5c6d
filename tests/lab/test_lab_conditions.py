from __future__ import annotations

import pytest

from wiretap.errors import BadInput
from wiretap.lab.conditions import BY_TOOL, CONDITIONS


def test_every_condition_has_a_unique_tool_and_an_object_schema_naming_its_arguments() -> None:
    assert len({c.tool for c in CONDITIONS}) == len(CONDITIONS) == len({c.name for c in CONDITIONS})
    for condition in CONDITIONS:
        schema = condition.input_schema()
        assert schema["type"] == "object"
        assert sorted(schema["properties"]) == sorted(a.name for a in condition.arguments)


def test_settings_fill_defaults_and_keep_an_interval_out_of_a_clients_range() -> None:
    assert BY_TOOL["poll_task"].settings({}) == {"interval_ms": None, "seconds": 6}
    assert BY_TOOL["poll_task"].settings({"interval_ms": 100}) == {"interval_ms": 100, "seconds": 6}


@pytest.mark.parametrize(
    "given", [{"nope": 1}, {"interval_ms": "100"}, {"interval_ms": 1.5}, {"interval_ms": True}, {"seconds": -1}]
)
def test_bad_arguments_are_refused_naming_the_tool(given: dict[str, object]) -> None:
    with pytest.raises(BadInput, match="poll_task"):
        BY_TOOL["poll_task"].settings(given)
