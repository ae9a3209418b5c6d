"""Decoding the MCP 2026-07-28 mirrored request headers, byte for byte (wiretap/wire/mcp_headers.py)."""

from __future__ import annotations

import pytest

from wiretap.wire.mcp_headers import HeaderValue, decode_header, name_field


def test_a_plain_ascii_name_is_its_own_value() -> None:
    assert decode_header(b"get_weather") == HeaderValue("get_weather", "get_weather")


def test_a_wrapped_name_decodes_to_the_utf_8_of_its_base64() -> None:
    assert decode_header(b"=?base64?SGVsbG8sIOS4lueVjA==?=") == HeaderValue(
        "=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", encoded=True
    )


def test_the_specifications_sentinel_example_decodes_to_the_literal_it_protects() -> None:
    assert decode_header(b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").value == "=?base64?literal?="


def test_an_empty_wrapped_value_is_the_empty_string() -> None:
    assert decode_header(b"=?base64??=") == HeaderValue("=?base64??=", "", encoded=True)


def test_a_payload_with_characters_outside_base64_cannot_be_decoded() -> None:
    assert decode_header(b"=?base64?not base64!?=") == HeaderValue(
        "=?base64?not base64!?=", None, encoded=True, problem="not base64"
    )


def test_an_impossible_base64_length_cannot_be_decoded() -> None:
    assert decode_header(b"=?base64?Y2Fmw?=").value is None


def test_base64_without_its_padding_decodes_leniently_and_says_so() -> None:
    assert decode_header(b"=?base64?Y2Fmw6k?=") == HeaderValue(
        "=?base64?Y2Fmw6k?=", "café", encoded=True, problem="base64 padding missing"
    )


def test_url_safe_base64_decodes_leniently_and_says_so() -> None:
    assert decode_header(b"=?base64?-_8=?=") == HeaderValue(
        "=?base64?-_8=?=", None, encoded=True, problem="base64 of bytes that are not UTF-8"
    )
    decoded = decode_header(b"=?base64?w6k-?=")
    assert (decoded.value, decoded.problem) == ("é>", "the URL-safe alphabet (- and _), not the standard one")


def test_base64_with_stray_trailing_bits_decodes_leniently_and_says_so() -> None:
    assert decode_header(b"=?base64?YR==?=") == HeaderValue(
        "=?base64?YR==?=", "a", encoded=True, problem="non-canonical base64 (stray trailing bits)"
    )


def test_base64_of_bytes_that_are_not_utf_8_cannot_be_decoded() -> None:
    assert decode_header(b"=?base64?/w==?=").value is None


def test_a_raw_non_ascii_name_is_read_as_utf_8_and_named_as_breaking_the_rule() -> None:
    raw = "café".encode()
    assert decode_header(raw) == HeaderValue(
        raw.decode("latin-1"), "café", problem="non-ASCII bytes without the =?base64?…?= wrapper"
    )


def test_a_raw_non_ascii_name_as_a_recording_holds_it_decodes_the_same() -> None:
    assert decode_header("café".encode().decode("latin-1")).value == "café"


def test_raw_bytes_that_are_not_utf_8_are_kept_as_latin_1() -> None:
    assert decode_header(b"caf\xe9").value == "caf\xe9"


@pytest.mark.parametrize("raw", [b"=?BASE64?Y2Fmw6k=?=", b"=?base64?Y2Fmw6k=", b"Y2Fmw6k=?=", b"=?base64?"])
def test_a_value_without_the_exact_lower_case_wrapper_is_taken_as_is(raw: bytes) -> None:
    assert decode_header(raw) == HeaderValue(raw.decode(), raw.decode())


def test_a_header_that_may_not_carry_the_wrapper_is_taken_as_is() -> None:
    assert decode_header(b"=?base64?dG9vbHMvY2FsbA==?=", wrapper=False).value == "=?base64?dG9vbHMvY2FsbA==?="


def test_control_characters_are_named() -> None:
    assert decode_header(b"a\x01b").problem == "control characters"


@pytest.mark.parametrize(
    ("method", "mirrored"),
    [
        ("tools/call", ("name", True)),
        ("prompts/get", ("name", True)),
        ("resources/read", ("uri", True)),
        ("tasks/get", ("taskId", False)),
        ("tools/list", None),
    ],
)
def test_mcp_name_mirrors_the_field_the_specification_names_for_each_method(
    method: str, mirrored: tuple[str, bool] | None
) -> None:
    assert name_field(method) == mirrored
