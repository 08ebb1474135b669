"""One bounded GET for Scout: pinned addresses, checked redirects, a byte cap, a total timeout.

Only text (``text/*``, XHTML) and JSON bodies are read; anything else is refused by its
content type before the body is read. Proxies and ``.netrc`` from the environment are not
used, so the connection goes exactly to the address that was checked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protoagent.errors import ToolRejected
from protoagent.integrations.web_guard import (
    DEFAULT_PORTS,
    CheckedUrl,
    HostAllowList,
    IPAddress,
    check_url,
    resolve_pinned,
)

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT_S = 15.0
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "ProtoAgent-Scout/0.1"
TEXT_TYPES = ("application/json", "application/xhtml+xml", "application/xml")


@dataclass(frozen=True, slots=True)
class FetchLimits:
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Total time for the whole fetch, redirects included."""
    max_bytes: int = MAX_BODY_BYTES
    json_only: bool = False


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response whose body was read (up to the byte cap)."""

    url: str
    """The URL finally read, after redirects."""
    status: int
    content_type: str
    charset: str
    body: bytes
    truncated: bool

    def text(self) -> str:
        try:
            return self.body.decode(self.charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


class FetchFailed(Exception):
    """The network or the server failed after approval: reported as an error output."""


def media_type(header: str) -> tuple[str, str]:
    """``("text/html", "utf-8")`` from a Content-Type header value."""
    parts = [p.strip() for p in header.split(";")]
    charset = "utf-8"
    for param in parts[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    return parts[0].lower(), charset


def readable(kind: str, *, json_only: bool) -> bool:
    is_json = kind == "application/json" or kind.endswith("+json")
    if json_only:
        return is_json
    return is_json or kind.startswith("text/") or kind in TEXT_TYPES


async def fetch(url: str, allow: HostAllowList, limits: FetchLimits | None = None) -> Fetched:
    """GET ``url`` within ``limits``. Raises ``ToolRejected`` (refused target or content type)
    or ``FetchFailed`` (timeout, connection or protocol failure)."""
    import httpx

    limits = limits or FetchLimits()
    try:
        async with asyncio.timeout(limits.timeout_s):
            async with httpx.AsyncClient(timeout=limits.timeout_s, trust_env=False, follow_redirects=False) as client:
                return await _follow(client, url, allow, limits)
    except TimeoutError:
        raise FetchFailed(f"no complete answer from {url} within {limits.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None


async def _follow(client: httpx.AsyncClient, url: str, allow: HostAllowList, limits: FetchLimits) -> Fetched:
    import httpx

    for _ in range(MAX_REDIRECTS + 1):
        checked = check_url(url, allow)
        response = await _send_pinned(client, checked, await resolve_pinned(checked, allow))
        try:
            location = response.headers.get("location")
            if response.is_redirect and location:
                url = str(httpx.URL(checked.url).join(location))
                continue
            return await _read(response, checked.url, limits)
        finally:
            await response.aclose()
    raise FetchFailed(f"more than {MAX_REDIRECTS} redirects starting from the requested URL")


async def _send_pinned(client: httpx.AsyncClient, checked: CheckedUrl, addresses: list[IPAddress]) -> httpx.Response:
    """Send the GET to the checked addresses in turn (the first that accepts a connection)."""
    import httpx

    headers = {"Host": _host_header(checked.host, checked.port, checked.scheme), "User-Agent": USER_AGENT}
    # The certificate is checked against the host name while the connection goes to the address.
    extensions = {"sni_hostname": checked.host} if checked.scheme == "https" else {}
    failure: httpx.ConnectError | None = None
    for address in addresses:
        target = httpx.URL(checked.url).copy_with(host=str(address))
        request = client.build_request("GET", target, headers=headers, extensions=extensions)
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            failure = exc
    assert failure is not None, "resolve_pinned returns at least one address"
    raise failure


def _host_header(host: str, port: int, scheme: str) -> str:
    name = f"[{host}]" if ":" in host else host
    return name if port == DEFAULT_PORTS[scheme] else f"{name}:{port}"


async def _read(response: httpx.Response, url: str, limits: FetchLimits) -> Fetched:
    kind, charset = media_type(response.headers.get("content-type", ""))
    if not readable(kind, json_only=limits.json_only):
        wanted = "JSON" if limits.json_only else "text (text/*) or JSON"
        raise ToolRejected(
            f"{url} answered with content type {kind or '(none)'!r}; only {wanted} can be read, "
            "binary content is refused",
            kind="unsupported_content",
            details={"url": url, "content_type": kind, "status": response.status_code},
        )
    body = bytearray()
    truncated = False
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > limits.max_bytes:
            del body[limits.max_bytes :]
            truncated = True
            break
    return Fetched(url, response.status_code, kind, charset, bytes(body), truncated)
