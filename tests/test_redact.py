from hypothesis import given
from hypothesis import strategies as st

from wiretap.redact import (
    REDACTED,
    TOKEN_VALUE,
    may_hold_token,
    may_need_redaction,
    redact_argv,
    redact_json,
    redact_text,
)


def test_sensitive_keys_are_redacted_at_any_depth() -> None:
    value = {"a": [{"Authorization": "Bearer abc.def.ghi"}], "api_key": "k", "x-api-key": "k2", "ok": 1}
    redacted, count = redact_json(value)
    assert redacted == {
        "a": [{"Authorization": REDACTED}],
        "api_key": REDACTED,
        "x-api-key": REDACTED,
        "ok": 1,
    }
    assert count == 3


def test_mcp_progress_tokens_and_cursors_are_not_credentials() -> None:
    value = {"_meta": {"progressToken": "p1"}, "cursor": "c", "nextCursor": "n"}
    assert redact_json(value) == (value, 0)


def test_token_shaped_values_are_redacted_inside_free_text() -> None:
    text, count = redact_text("use sk-ant-api03-abcdefghijklmnopqrstuv and ghp_abcdefghijklmnopqrstuvwxyz0123")
    assert text == f"use {REDACTED} and {REDACTED}"
    assert count == 2


def test_a_jwt_is_redacted() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert redact_text(f"token={jwt}")[0] == f"token={REDACTED}"


def test_the_precheck_lets_clean_messages_through_untouched() -> None:
    assert not may_need_redaction('{"jsonrpc":"2.0","method":"tools/list","params":{"_meta":{"progressToken":1}}}')
    assert may_need_redaction('{"headers":{"authorization":"x"}}')
    assert may_need_redaction('{"text":"Bearer abcdefghijklmnop"}')


def test_argv_values_after_credential_flags_are_redacted() -> None:
    argv = [
        "server",
        "--api-key",
        "k123",
        "--token=t456",
        "--port",
        "8080",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
    ]
    assert redact_argv(argv) == [
        "server",
        "--api-key",
        REDACTED,
        f"--token={REDACTED}",
        "--port",
        "8080",
        REDACTED,
    ]


@given(
    st.lists(
        st.sampled_from(
            [
                "Bearer ",
                "Basic ",
                "sk-",
                "ghp_",
                "github_pat_",
                "glpat-",
                "xoxb-",
                "AKIA",
                "AIza",
                "eyJ",
                ".",
                "abcdefghij",
                "ABCDEFGH",
                "0123456789",
                "_",
                "-",
                " ",
                '"',
            ]
        ),
        max_size=12,
    )
)
def test_the_fast_pre_check_never_skips_text_the_token_pattern_would_match(parts: list[str]) -> None:
    text = "".join(parts)
    assert TOKEN_VALUE.search(text) is None or may_hold_token(text)
