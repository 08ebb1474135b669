"""Which web addresses Scout may reach: http(s) only, public hosts unless a person allows more.

Two checks guard against server-side request forgery. ``check_url`` runs in ``prepare``
without touching the network (no DNS lookup before approval, since a lookup already leaks
the host name): it refuses other schemes, IP literals in private, loopback, link-local or
reserved ranges, and local names such as ``localhost``. ``resolve_pinned`` runs after
approval: it resolves the host, refuses if any address is not public, and returns the one
addresses to connect to, so a second lookup cannot swap in another (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from protoagent.errors import ToolRejected

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_HOSTS_SERVICE = "scout_allow_hosts"
"""The ``RunServices`` field (named in refusals) of the host names, addresses or networks (CIDR)
Scout may reach even though they are not public (a string is split on commas)."""
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class HostAllowList:
    """Non-public hosts a person has explicitly allowed."""

    names: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_service(cls, value: Any) -> HostAllowList:
        if value is None:
            return cls()
        entries: Iterable[Any] = value.split(",") if isinstance(value, str) else value
        names: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            text = str(entry).strip().lower().strip("[]")
            if not text:
                continue
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                names.add(text.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def permits(self, host: str, address: IPAddress | None = None) -> bool:
        if host.lower().rstrip(".") in self.names:
            return True
        return address is not None and any(address in network for network in self.networks)


@dataclass(frozen=True, slots=True)
class CheckedUrl:
    """A URL that passed the offline checks."""

    url: str
    scheme: str
    host: str
    """Lower-case host name or address, without IPv6 brackets."""
    port: int


def refusal(message: str, **details: Any) -> ToolRejected:
    return ToolRejected(message, kind="url_refused", details=details)


def check_url(url: str, allow: HostAllowList) -> CheckedUrl:
    """Offline checks; raises ``ToolRejected(kind="url_refused")``. Never touches the network."""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise refusal(f"{url!r} is not a valid URL ({exc}); give a full http:// or https:// URL", url=url) from None
    scheme = parsed.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise refusal(
            f"scheme {scheme or '(none)'!r} is refused; only http:// and https:// URLs can be fetched", url=url
        )
    host = parsed.host.lower().rstrip(".")
    if not host:
        raise refusal(f"{url!r} has no host; give a full URL such as https://example.org/page", url=url)
    if parsed.userinfo:
        raise refusal("URLs with credentials (user:password@) are refused; remove them", url=url)
    port = parsed.port or DEFAULT_PORTS[scheme]
    address = literal_address(host)
    if address is not None:
        refuse_unless_public(host, address, allow)
    elif _local_name(host) and not allow.permits(host):
        raise _not_public(host, "a local host name")
    return CheckedUrl(str(parsed), scheme, host, port)


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, including legacy IPv4 forms (``2130706433``, ``0x7f.1``)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return is_public(mapped)
    return address.is_global and not address.is_multicast


def refuse_unless_public(host: str, address: IPAddress, allow: HostAllowList) -> None:
    if not is_public(address) and not allow.permits(host, address):
        raise _not_public(host, f"a non-public address ({address})")


def _local_name(host: str) -> bool:
    return host in LOCAL_NAMES or host.endswith(LOCAL_SUFFIXES) or "." not in host


def _not_public(host: str, what: str) -> ToolRejected:
    return refusal(
        f"host {host!r} is {what}; Scout only reaches public hosts. A person can allow it by adding "
        f"it to the {ALLOW_HOSTS_SERVICE!r} list",
        host=host,
    )


async def resolve_pinned(checked: CheckedUrl, allow: HostAllowList) -> list[IPAddress]:
    """Resolve the host once, refuse any non-public answer, and return the addresses to use."""
    address = literal_address(checked.host)
    if address is not None:
        refuse_unless_public(checked.host, address, allow)
        return [address]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(checked.host, checked.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise refusal(f"host {checked.host!r} cannot be resolved ({exc})", host=checked.host) from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
    if not addresses:
        raise refusal(f"host {checked.host!r} has no address", host=checked.host)
    for resolved in addresses:
        refuse_unless_public(checked.host, resolved, allow)
    return addresses
