"""Where a judge may connect: every outbound judge connection is checked on the address it reaches.

A judge's base URL is typed by people, and the server sends the judge's API key there. So the
server refuses, by default, every address that is not on the public internet: loopback (127.0.0.0/8,
::1, and `localhost`), private networks (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
(169.254/16, where cloud metadata services answer, and fe80::/10), shared (100.64/10), unspecified,
multicast, reserved and documentation ranges. IPv6 addresses that carry an IPv4 address are judged by
the IPv4 address they carry too: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96, RFC 6052), 6to4
(2002::/16), Teredo (2001::/32, its client) and IPv4-compatible (::a.b.c.d), so that
64:ff9b::7f00:1 is refused as 127.0.0.1 is. `JUDGE_ALLOW_ADDRESSES` lists the exceptions (a model
served on this machine: `127.0.0.1`; the tests allow their loopback server that way).

The check is made when the connection is made, not on the URL's text: `GuardedBackend` resolves the
host, checks each address, and connects the socket to the address it checked. A name that resolves
to a public address when the judge is saved and to 127.0.0.1 later (DNS rebinding), a redirect to an
internal address, or a hostname that is an alias of one, are all refused the same way. Refused
connections fail as connection errors (`httpcore2.ConnectError`): nothing of the request was sent.

Pure: no Django. `judges.transport.openai_client` builds every judge client with `guarded_http_client`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

import httpcore2
import httpx2
import openai

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
POLICY_PREFIX = "refused by the outbound policy"
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: a gateway translates to the last 32 bits
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d; :: and ::1 are not IPv4 addresses


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 address carries, with the form's name, or None."""
    if ip in NAT64:
        return "NAT64, 64:ff9b::/96", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return "6to4, 2002::/16", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo, 2001::/32", ip.teredo[1]
    if ip in IPV4_COMPATIBLE and int(ip) > 1:
        return "IPv4-compatible, ::a.b.c.d", ipaddress.IPv4Address(int(ip))
    return None


def _kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private address"
    return "not a public address"


def address_refusal(address: str, allowed: Sequence[Network]) -> str:
    """Why a judge may not connect to `address` (an IP), or "" when it may."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if isinstance(ip, ipaddress.IPv6Address) and (carried := embedded_ipv4(ip)) is not None:
        form, inner = carried
        if refusal := address_refusal(str(inner), allowed):
            return f"{ip} carries {inner} ({form}), and {refusal}"
    if any(ip in network for network in allowed):
        return ""
    if ip.is_global and not ip.is_multicast:
        return ""
    return f"{ip} is {_kind(ip)}; judges may not connect there unless JUDGE_ALLOW_ADDRESSES lists it"


def url_refusal(url: str, allowed: Sequence[Network]) -> str:
    """What the URL's text alone shows to be refused (an IP literal or `localhost`), or "".

    Only an early, friendlier answer when a judge is saved: hostnames are checked for real when
    each connection is made."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    if host == "localhost" or host.endswith(".localhost"):
        host = "127.0.0.1"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return ""
    refusal = address_refusal(host, allowed)
    return f"The base URL's host {refusal}." if refusal else ""


class GuardedBackend(httpcore2.SyncBackend):
    """httpcore's socket backend, resolving the host itself and connecting only to allowed addresses."""

    def __init__(self, allowed: Iterable[Network]) -> None:
        self.allowed = tuple(allowed)

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise httpcore2.ConnectError(f"cannot resolve the host {host!r}: {exc}") from exc
        refusals: list[str] = []
        failure: Exception | None = None
        for *_, sockaddr in infos:
            address = sockaddr[0]
            if refusal := address_refusal(address, self.allowed):
                if refusal not in refusals:
                    refusals.append(refusal)
                continue
            try:
                # The address just checked, never the name again: nothing can re-resolve it elsewhere.
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        if failure is not None:
            raise failure
        named = "" if any(refusal.startswith(f"{host} ") for refusal in refusals) else f" ({host})"
        raise httpcore2.ConnectError(f"{POLICY_PREFIX}{named}: {'; '.join(refusals)}")


class GuardedTransport(httpx2.HTTPTransport):
    """httpx's transport over a connection pool whose sockets come from `GuardedBackend`."""

    def __init__(self, *, allowed: Iterable[Network], limits: httpx2.Limits) -> None:
        super().__init__(limits=limits)
        # The pool httpx built has the default backend: replace it with the same pool over the guarded one.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(allowed),
        )


def guarded_http_client(*, allowed: Iterable[Network], timeout: float) -> httpx2.Client:
    """The openai client's HTTP client with its usual defaults (limits, redirects), over `GuardedTransport`.

    With a transport of its own, httpx ignores proxy variables (HTTP_PROXY, ...): judge connections
    go straight out, so that the check applies to what they reach."""
    transport = GuardedTransport(allowed=allowed, limits=openai.DEFAULT_CONNECTION_LIMITS)
    return openai.DefaultHttpxClient(transport=transport, timeout=timeout)
