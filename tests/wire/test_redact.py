import json
import os
import re
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiretap.wire.messages import record_frame
from wiretap.wire.redact import (
    LineRedactor,
    Redactor,
    redact_argv,
    redact_header,
    redact_json,
    redact_text,
    redact_url,
)
from wiretap.wire.secrets import ANCHORS, KEY_ANCHORS, RULES
from wiretap.wire.token_precheck import FOLDS_TO_ASCII, may_hold_token_in, may_need_redaction

MARK = re.compile(r"\[redacted:[0-9a-f]{4}\]")


def test_sensitive_keys_are_redacted_at_any_depth() -> None:
    value = {"a": [{"Authorization": "Bearer abc.def.ghi"}], "api_key": "k", "x-api-key": "k2", "ok": 1}
    redacted, count = redact_json(value)
    assert MARK.fullmatch(redacted["a"][0]["Authorization"])
    assert MARK.fullmatch(redacted["api_key"]) and MARK.fullmatch(redacted["x-api-key"])
    assert redacted["ok"] == 1 and count == 3


def test_the_same_secret_gets_the_same_mark_and_another_secret_another() -> None:
    redactor = Redactor(b"k" * 16)
    one, _ = redactor.json({"a": "Bearer tok3n-abcdef", "b": {"token": "tok3n-abcdef"}, "c": "Bearer 0ther-123456"})
    assert one["a"] == "Bearer " + one["b"]["token"] != one["c"]


def test_the_mark_depends_on_the_recording_key() -> None:
    assert Redactor(b"a" * 16).mark("ghp_x") != Redactor(b"b" * 16).mark("ghp_x")


def test_mcp_progress_tokens_and_cursors_are_not_credentials() -> None:
    value = {"_meta": {"progressToken": "p1"}, "cursor": "c", "nextCursor": "n", "nextPageToken": "x9"}
    assert redact_json(value) == (value, 0)


def test_a_schema_a_flag_a_number_and_prose_under_secret_names_stay() -> None:
    value = {
        "inputSchema": {"properties": {"password": {"type": "string"}, "token": {"type": "string"}}},
        "secret": False,
        "token": 42,
        "cookie": "chocolate chip",
    }
    assert redact_json(value) == (value, 0)


def test_a_password_that_reads_like_prose_is_still_a_password() -> None:
    redacted, count = redact_json({"password": "correct horse battery staple"})
    assert count == 1 and MARK.fullmatch(redacted["password"])


def test_words_that_start_like_tokens_are_not_tokens() -> None:
    for text in ("Basic arithmetic operations", "sk-learn-preprocessing-tools", "Bearer of bad news"):
        assert redact_text(text) == (text, 0)


def test_token_shaped_values_are_redacted_inside_free_text() -> None:
    text, count = redact_text("use sk-ant-api03-abcdefghijklmnopqrstuv0 and ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    assert MARK.fullmatch(text.split()[1]) and MARK.fullmatch(text.split()[3]) and count == 2


def test_json_inside_a_string_is_redacted_as_json() -> None:
    result = {"content": [{"type": "text", "text": json.dumps({"data": json.dumps({"api_key": "abc123"})})}]}
    redacted, count = redact_json(result)
    assert count == 1 and "abc123" not in json.dumps(redacted)


def test_a_lone_surrogate_does_not_stop_redaction() -> None:
    text, count = redact_text("\ud800 token=abc123def \udfff")
    assert count == 1 and "abc123def" not in text


def test_argv_values_after_credential_flags_are_redacted() -> None:
    argv = ["server", "--api-key", "k123", "--token=t456", "--port", "8080", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"]
    shown = redact_argv(argv)
    assert shown[:2] == ["server", "--api-key"] and MARK.fullmatch(shown[2])
    assert shown[3].startswith("--token=") and MARK.fullmatch(shown[3].removeprefix("--token="))
    assert shown[4:6] == ["--port", "8080"] and MARK.fullmatch(shown[6])


def test_a_json_list_holds_an_argv_whose_value_after_a_credential_flag_is_redacted() -> None:
    args = ["--api-key", "opaque-Value-7", "--port", "8080", "--token", "--verbose", "plain"]
    shown, count = redact_json({"command": "srv", "args": args})
    assert count == 1 and MARK.fullmatch(shown["args"][1])
    assert shown == {"command": "srv", "args": ["--api-key", shown["args"][1], *args[2:]]}


def test_a_query_parameter_is_redacted_on_its_own_whatever_its_neighbours_hold() -> None:
    redactor = Redactor(b"k" * 16)
    url = "https://h/mcp?note=password:%20hunter2&api_key=s3cret-Value&v=1"
    assert redactor.url(url) == (
        f"https://h/mcp?note=password: {redactor.mark('hunter2')}&api_key={redactor.mark('s3cret-Value')}&v=1"
    )
    assert redactor.url("https://h/mcp?page=2&sort=asc%20desc") == "https://h/mcp?page=2&sort=asc%20desc"


def test_every_rule_has_anchors_and_the_pre_check_knows_them_all() -> None:
    assert all(rule.anchors for rule in RULES)
    assert all(anchor == anchor.lower() for anchor in ANCHORS)
    assert all(any(a in k for a in ANCHORS) for k in KEY_ANCHORS)


_FRAGMENTS = [
    "Bearer ",
    "basic ",
    "dXNlcjpwYXNz",
    "sk-",
    "sk_live_",
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "AKIA",
    "AIza",
    "eyJ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "://",
    "@",
    "?",
    "&",
    "=",
    ": ",
    "api",
    "_",
    "Key",
    "token",
    "Progress",
    "secret",
    "PASSWORD",
    "cookie",
    "mcp-session-id",
    "abcdefghij",
    "ABCDEFGH",
    "0123456789",
    ".",
    "-",
    " ",
    '"',
    "\\u0041",
    "\\n",
    "{",
    "}",
]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14))
def test_the_pre_check_never_passes_over_text_the_redactor_would_change(parts: list[str]) -> None:
    text = "".join(parts)
    assert redact_text(text)[0] == text or may_need_redaction(text)


def _joined(fragments: list[str], most: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(fragments), max_size=most).map("".join)


@settings(max_examples=300)
@given(
    st.recursive(
        _joined(_FRAGMENTS, 6) | st.integers() | st.booleans(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(
                _joined(["api", "_", "key", "Token", "x", "-", "password", "\u212a"], 4), children, max_size=3
            )
        ),
        max_leaves=8,
    ),
    st.booleans(),
)
def test_the_pre_check_never_passes_over_json_the_redactor_would_change(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert redact_json(json.loads(text))[1] == 0 or may_need_redaction(text)


_ANY_TEXT = (
    st.text(st.characters(exclude_categories=[]), max_size=60)
    | _joined(_FRAGMENTS, 10)
    | _joined(["\ud800", "\udfff", "\x00", "token=", "Bearer ", "ghp_", "{", '"', "\u212a"], 12)
)


@settings(max_examples=300)
@given(
    _ANY_TEXT,
    st.recursive(
        _ANY_TEXT | st.integers() | st.floats() | st.booleans() | st.none(),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(_ANY_TEXT, children, max_size=3),
        max_leaves=10,
    ),
)
def test_the_redactor_never_raises_whatever_it_is_given(text: str, value: object) -> None:
    redact_text(text)
    redact_json(value)
    redact_argv([text, "--token", text])
    redact_url(text)
    redact_header(text, text)
    record_frame(text.encode("utf-8", "surrogatepass"), redact=True)
    record_frame(json.dumps(value).encode(), redact=True)


def test_a_private_key_written_line_by_line_is_hidden_whole() -> None:
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXhxdXV4"]
    lines = ["starting", "-----BEGIN PRIVATE KEY-----", *body, "-----END PRIVATE KEY-----", "ready"]
    redactor = LineRedactor()
    shown = [redactor.line(line) for line in lines]
    assert shown[0] == "starting" and shown[-1] == "ready"
    assert all(MARK.fullmatch(line) for line in shown[1:-1])


# The batch pre-check reads raw UTF-8 bytes, many lines at once: it must say "maybe" for every line
# the per-message pre-check says "maybe" for, whatever the case, escapes or non-ASCII letters.
_CASED = st.sampled_from(_FRAGMENTS).flatmap(
    lambda f: st.lists(st.booleans(), min_size=len(f), max_size=len(f)).map(
        lambda ups: "".join(c.upper() if up else c.lower() for c, up in zip(f, ups, strict=True))
    )
)
_LINE = st.lists(
    _CASED
    | st.sampled_from(["\u212a", "\u0130", "\u017f", "\u0131", "é", "\n", "\\u006b", "\\u004B"])
    | st.text(max_size=4),
    max_size=10,
).map("".join)


@settings(max_examples=500)
@given(st.lists(_LINE, max_size=6))
def test_the_batch_pre_check_never_passes_over_a_line_the_per_message_one_would_look_at(lines: list[str]) -> None:
    from wiretap.wire.token_precheck import _may_hold_token_scan

    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    for check in (may_hold_token_in, _may_hold_token_scan):  # Hyperscan, and the scans without it
        if not check(data):
            for line in "\n".join(lines).split("\n"):
                assert not may_need_redaction(line)
                assert redact_text(line)[0] == line


@settings(max_examples=300)
@given(st.lists(_LINE, max_size=6), st.integers(0, 40), st.integers(0, 40))
def test_the_batch_pre_check_of_a_slice_is_no_weaker_than_of_the_whole(lines: list[str], a: int, b: int) -> None:
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if may_hold_token_in(memoryview(data)[a : len(data) - b]):
        assert may_hold_token_in(data)


def test_every_character_whose_lower_case_holds_ascii_is_one_the_batch_pre_check_looks_for() -> None:
    import sys

    folding = [chr(c) for c in range(128, sys.maxunicode + 1) if any(ord(x) < 128 for x in chr(c).lower())]
    assert sorted(folding) == sorted(FOLDS_TO_ASCII)
    for char in folding:
        assert may_hold_token_in(f"x{char}y".encode())


def test_the_batch_pre_check_finds_each_anchor_in_any_case_at_any_place() -> None:
    filler = b"lorem ipsum dolor " * 50
    for anchor in ANCHORS:
        for spelled in (anchor, anchor.upper(), anchor.title()):
            assert may_hold_token_in(filler + spelled.encode() + filler), spelled
    assert may_hold_token_in(filler + b'"\\u0074oken"')
    assert not may_hold_token_in(filler)


def test_a_buffer_longer_than_one_scan_is_read_in_windows_that_cut_no_anchor_in_two(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wiretap.wire import token_precheck

    monkeypatch.setattr(token_precheck, "_SCAN_WINDOW", 100)  # Hyperscan's own limit is 4 GiB
    filler = b"lorem ipsum dolor " * 20
    assert not may_hold_token_in(filler)
    for anchor in (b"Authorization", b"-----BEGIN", b"\\u0074", "\u212a".encode(), b"@"):
        for at in range(len(filler) + 1):
            assert may_hold_token_in(filler[:at] + anchor + filler[at:]), (anchor, at)


_BUILT_APART = """
from wiretap.recording.precheck_build import build_precheck_apart
from wiretap.wire import token_precheck as precheck
from wiretap.wire.secrets import ANCHORS
build_precheck_apart()
assert precheck._BUILT_APART, "the child process handed over no database"
filler = b"lorem ipsum dolor " * 50
assert not precheck.may_hold_token_in(filler)
assert all(precheck.may_hold_token_in(filler + a.upper().encode() + filler) for a in ANCHORS)
precheck.use_built_apart(b"not a database")  # one this build cannot read: compiled here instead
assert precheck.may_hold_token_in(b"x token x") and not precheck.may_hold_token_in(filler)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="builds it in a forked child")
def test_a_pre_check_built_in_a_child_process_says_what_one_built_here_says() -> None:
    subprocess.run([sys.executable, "-c", _BUILT_APART], check=True, timeout=60)  # (it forks: not in pytest's process)


def test_threads_checking_at_once_each_get_their_own_answer() -> None:
    clean, dirty = b"lorem ipsum dolor " * 50_000, b"lorem ipsum dolor " * 50_000 + b"token"
    answers: list[bool] = []

    def check(data: bytes) -> None:
        answers.extend(may_hold_token_in(data) for _ in range(50))

    threads = [threading.Thread(target=check, args=(data,)) for data in (clean, dirty, clean, dirty)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [False] * 100 + [True] * 100
