"""Who may talk to the server: a bearer token or its cookie, always; loopback Host names (and
the bound address) on a loopback bind; same origin.

Loopback is not a boundary between the people of one machine: every local user can connect
to 127.0.0.1, so the token is required there too."""

from __future__ import annotations

import ipaddress
import json
import secrets
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "protoagent_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether binding to ``host`` keeps the server on this machine."""
    name = host.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _hostname(authority: str) -> str:
    return urlsplit("//" + authority).hostname or ""


def _loopback_host_name(name: str) -> bool:
    """``localhost`` or a loopback address literal (``127.0.0.2``, ``::1``): names no other web
    site can point at this server through DNS rebinding, since no DNS answer is involved."""
    return name in LOOPBACK_NAMES or is_loopback(name)


class AccessGuard:
    """ASGI middleware in front of every route.

    A request needs ``Authorization: Bearer <token>`` or the token cookie; opening any page with
    ``?token=<token>`` sets the cookie and drops the token from the address. On a loopback bind
    the ``Host`` must also be ``localhost`` or a loopback address (any of 127.0.0.0/8, so
    ``--host 127.0.0.2`` answers on its own address), which keeps other web sites out through DNS
    rebinding. A request from another origin (``Origin`` set and not this server) is refused.
    An empty token refuses everything.
    """

    def __init__(self, app: ASGIApp, token: str, loopback: bool = True) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != host:
            await _refuse(send, 403, f"cross-origin request from {origin!r} refused")
            return
        if self.loopback and not _loopback_host_name(_hostname(host)):
            await _refuse(send, 403, f"host {host!r} is not a loopback name; open http://127.0.0.1:PORT/")
            return
        query = parse_qs(scope.get("query_string", b"").decode())
        if scope["method"] == "GET" and self._matches(query.get("token", [""])[0]):
            await _set_cookie_and_redirect(send, scope["path"], self.token)
            return
        if not self._authorized(headers):
            await _refuse(
                send, 401, "missing or wrong token: send 'Authorization: Bearer <token>' or open /?token=<token>"
            )
            return
        await self.app(scope, receive, send)

    def _matches(self, candidate: str) -> bool:
        return bool(candidate) and bool(self.token) and secrets.compare_digest(candidate.encode(), self.token.encode())

    def _authorized(self, headers: Headers) -> bool:
        bearer = headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and self._matches(bearer[7:].strip()):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and self._matches(value):
                return True
        return False


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _set_cookie_and_redirect(send: Send, path: str, token: str) -> None:
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", (path or "/").encode()),
                (b"set-cookie", cookie.encode()),
                (b"content-length", b"0"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
