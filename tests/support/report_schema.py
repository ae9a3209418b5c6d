"""Every report the tests produce is checked against the published report schema on its way."""

from __future__ import annotations

import functools
from typing import Any

import jsonschema

from wiretap.schemas import schema


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema("report"))


def valid_report(document: dict[str, Any]) -> dict[str, Any]:
    """The report JSON, once it has been found to follow the schema (AssertionError naming the first error)."""
    error = next(iter(_validator().iter_errors(document)), None)
    assert error is None, f"report JSON breaks its schema at {'/'.join(map(str, error.absolute_path))}: {error.message}"
    return document
