import base64
import json
import re

import pytest

from wiretap.wire.messages import record_frame
from wiretap.wire.redact import redact_json
from wiretap.wire.secrets import names_secret


def test_a_json_frame_is_kept_verbatim_as_the_message() -> None:
    frame = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "z": 1.50}'
    recorded = record_frame(frame, redact=True)
    assert recorded.msg_bytes == frame
    assert recorded.fields == {"size": len(frame)}


def test_a_non_json_frame_is_recorded_as_raw_text() -> None:
    recorded = record_frame(b"Starting server on stdout, oops", redact=True)
    assert recorded.msg_bytes is None
    assert recorded.fields["raw"] == "Starting server on stdout, oops"


def test_invalid_utf8_is_kept_losslessly_beside_a_readable_version() -> None:
    frame = b'{"x": "\xff\xfe"}'
    recorded = record_frame(frame, redact=True)
    assert base64.b64decode(recorded.fields["raw_base64"]) == frame
    assert "\ufffd" in recorded.fields["raw"]


def test_nan_and_infinity_are_not_json_and_stay_raw() -> None:
    assert record_frame(b'{"a": NaN}', redact=False).fields["raw"] == '{"a": NaN}'


def test_a_crlf_line_ending_is_noted_and_the_message_still_parsed() -> None:
    recorded = record_frame(b'{"id":1}\r', redact=True)
    assert recorded.msg_bytes == b'{"id":1}'
    assert recorded.fields["eol"] == "\r\n"


def test_a_blank_frame_is_raw() -> None:
    assert record_frame(b"   ", redact=True).fields["raw"] == "   "


def test_credentials_in_a_message_are_redacted_and_counted() -> None:
    frame = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "login", "arguments": {"password": "hunter2", "user": "ann"}},
        }
    ).encode()
    recorded = record_frame(frame, redact=True)
    assert recorded.msg_bytes is not None
    message = json.loads(recorded.msg_bytes)
    assert message["params"]["arguments"]["user"] == "ann"
    assert re.fullmatch(r"\[redacted:[0-9a-f]{4}\]", message["params"]["arguments"]["password"])
    assert recorded.fields["redacted"] == 1


def test_without_redaction_credentials_are_recorded_as_sent() -> None:
    frame = b'{"params":{"password":"hunter2"}}'
    assert record_frame(frame, redact=False).msg_bytes == frame


SECRET_VALUE = "ghp_" + "a1B2c3D4e5" * 4
PROGRESS_FRAMES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7}}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc","progress":1}}',
    b'{"params":{"progressToken":"' + SECRET_VALUE.encode() + b'"}}',
    b'{"params":{"progressToken":1,"text":"' + SECRET_VALUE.encode() + b'"}}',
    b'{"params":{"progressToken":1,"api_key":"abcDEF123456789xyz"}}',
    b'{"params":{"progressToken":1,"accessToken":"abcDEF123456789xyz"}}',
    b'{"params":{"progressToken":1,"t\\u006fken":"abcDEF123456789xyz"}}',
    b'{"params":{"progressToken":1,"note":"{\\"progressToken\\":1,\\"token\\":\\"abcDEF123456789xyz\\"}"}}',
    b'{"params":{"progressToken":1,"text":"\\"progressToken\\": password=hunter2hunter2"}}',
    b'{"params":{"progressToken":["abcDEF123456789xyz"]}}',
    b'{"progressToken":1} trailing',
    b'{"progressToken" :1,"token":"abcDEF123456789xyz"}',
]


@pytest.mark.parametrize("frame", PROGRESS_FRAMES)
def test_a_progress_token_key_alone_skips_the_redaction_walk_and_records_what_the_walk_would(frame: bytes) -> None:
    assert not names_secret("progressToken")
    got = record_frame(frame, redact=True)
    try:
        value = json.loads(frame)
    except ValueError:
        assert got.msg_bytes is None and "raw" in got.fields
        return
    cleaned, count = redact_json(value)
    if count:
        assert got.fields["redacted"] == count and json.loads(got.msg_bytes or b"") == cleaned
    else:
        assert got.msg_bytes == frame and "redacted" not in got.fields
