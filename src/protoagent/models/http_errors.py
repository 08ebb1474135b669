"""HTTP failures of hosted model APIs, translated once into ``ProviderError``.

Transient (a retry may help): 408, 409, 429, any 5xx (Anthropic's 529 included), connection
errors, resets and timeouts. Everything else (401/403 auth, 400/404/422 bad request) is final.
The agent loop owns retries; the SDKs are built with ``max_retries=0``.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from protoagent.errors import ProviderError

TRANSIENT_STATUSES = frozenset({408, 409, 429})
_TRANSPORT_NAMES = frozenset({"TransportError", "TimeoutException", "NetworkError", "RemoteProtocolError"})


def is_transient_status(status: int) -> bool:
    return status in TRANSIENT_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait, from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    when = email.utils.parsedate_tz(value)
    if when is None:
        return None
    return max(email.utils.mktime_tz(when) - time.time(), 0.0)


def error_message(body: object, fallback: str) -> str:
    """The provider's own message from an error body (``{"error": {"message": ...}}`` shapes)."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("message"), str):
            return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body.strip()
    return fallback


def status_error(provider: str, status: int, headers: Mapping[str, str], body: object, fallback: str) -> ProviderError:
    """A ``ProviderError`` for an HTTP error status, with the provider's message."""
    message = error_message(body, fallback)
    transient = is_transient_status(status)
    return ProviderError(
        f"{provider} returned HTTP {status}: {message}",
        provider=provider,
        status=status,
        retry_after=parse_retry_after(headers) if transient else None,
        transient=transient,
    )


def connection_error(provider: str, error: BaseException) -> ProviderError:
    """A transient ``ProviderError`` for a failed, reset or timed-out connection."""
    detail = str(error) or type(error).__name__
    return ProviderError(f"{provider} connection failed: {detail}", provider=provider, transient=True)


def is_transport_error(error: BaseException) -> bool:
    """Whether an exception is an httpx/httpcore transport failure the SDK did not wrap."""
    for cls in type(error).__mro__:
        module = cls.__module__.split(".", 1)[0]
        if module in ("httpx", "httpx2", "httpcore") and cls.__name__ in _TRANSPORT_NAMES:
            return True
    return isinstance(error, ConnectionError | TimeoutError)


def lower_headers(headers: Any) -> dict[str, str]:
    """Response headers as a plain dict with lower-case names."""
    try:
        return {str(key).lower(): str(value) for key, value in headers.items()}
    except AttributeError:
        return {}


def vendor_failure(provider: str, error: Exception, sdk: Any) -> ProviderError | None:
    """Map a vendor SDK's non-status failure (both SDKs share these class names) or a raw transport
    error to a ``ProviderError``; ``None`` for anything that is not a provider failure."""
    if isinstance(error, sdk.APIConnectionError) or is_transport_error(error):
        return connection_error(provider, error)
    if isinstance(error, sdk.APIError):
        return ProviderError(f"{provider} failed: {error.message}", provider=provider)
    return None
