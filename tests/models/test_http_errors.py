"""HTTP failures of hosted model APIs mapped to ProviderError."""

from __future__ import annotations

import email.utils
import time

import pytest

from protoagent.models.http_errors import (
    connection_error,
    error_message,
    is_transport_error,
    parse_retry_after,
    status_error,
)


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": future}) or 0) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0


@pytest.mark.parametrize(
    ("status", "transient"),
    [
        (408, True),
        (429, True),
        (500, True),
        (529, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (422, False),
    ],
)
def test_status_classes(status: int, transient: bool) -> None:
    error = status_error("p", status, {"retry-after": "3"}, {"error": {"message": "why"}}, "fallback")
    assert error.transient is transient
    assert error.retry_after == (3.0 if transient else None)
    assert str(error) == f"p returned HTTP {status}: why"


def test_error_message_shapes() -> None:
    assert error_message({"error": {"message": "a"}}, "f") == "a"
    assert error_message({"message": "b"}, "f") == "b"
    assert error_message({"error": "c"}, "f") == "c"
    assert error_message("  d  ", "f") == "d"
    assert error_message(None, "f") == "f"


def test_transport_errors() -> None:
    assert is_transport_error(ConnectionResetError())
    assert is_transport_error(TimeoutError())
    assert not is_transport_error(ValueError())
    error = connection_error("p", ConnectionResetError("reset by peer"))
    assert error.transient
    assert "reset by peer" in str(error)
