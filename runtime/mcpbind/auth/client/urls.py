"""Checks on every URL a server hands the OAuth client, before anything is fetched.

A protected-resource or authorization-server metadata document is attacker-controlled
input: its URLs may point at the cloud metadata service, the machine's own admin ports or a
``file:`` URL (SSRF). Rules (authorization.mdx §Security Considerations):

* ``https`` only; ``http`` only for a loopback host, and only when the MCP server itself is
  on loopback (a local development setup);
* no user-info in the URL;
* no private, link-local, loopback or reserved address, literal or resolved, unless the MCP
  server itself is on loopback; the metadata-service addresses are refused always.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import anyio

from .errors import AuthError

__all__ = ["canonical_resource", "check_url", "is_loopback_url", "origin", "resolve_checked"]

_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
_METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("100.100.100.200"),
        ipaddress.ip_address("fd00:ec2::254"),
    }
)
_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _literal(host: str) -> _IP | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _is_loopback_host(host: str) -> bool:
    address = _literal(host)
    if address is not None:
        return address.is_loopback
    return host.lower() in ("localhost",) or host.lower().endswith(".localhost")


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is a loopback address or ``localhost``."""
    host = urlsplit(url).hostname
    return bool(host) and _is_loopback_host(host or "")


def _refuse(url: str, why: str) -> AuthError:
    shown = url if len(url) <= 200 else url[:200] + "…"
    return AuthError(f"refusing to fetch {shown!r} from server metadata: {why}")


def check_url(url: str, *, local_ok: bool) -> str:
    """``url`` if its form is acceptable (scheme, host, no credentials), else AuthError.

    ``local_ok``: the MCP server is itself on loopback, so plain-http loopback and private
    addresses are acceptable.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError as exc:
        raise _refuse(url, f"not a valid URL ({exc})") from None
    if parts.scheme not in ("https", "http"):
        raise _refuse(url, f"scheme {parts.scheme or '(none)'!r} is not https")
    if not host:
        raise _refuse(url, "no host")
    if parts.username is not None or parts.password is not None:
        raise _refuse(url, "user info in the URL")
    if parts.fragment:
        raise _refuse(url, "a fragment in the URL")
    if host.lower() in _METADATA_HOSTS:
        raise _refuse(url, "a cloud metadata-service host")
    address = _literal(host)
    if address is not None:
        _check_address(url, address, local_ok)
    if parts.scheme == "http" and not (local_ok and _is_loopback_host(host)):
        raise _refuse(url, "plain http is only allowed for loopback when the MCP server is local")
    return url


def _check_address(url: str, address: _IP, local_ok: bool) -> None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in _METADATA_ADDRESSES:
        raise _refuse(url, f"{address} is a cloud metadata-service address")
    if local_ok:
        return
    if address.is_loopback:
        raise _refuse(url, f"{address} is a loopback address and the MCP server is not local")
    if address.is_link_local:
        raise _refuse(url, f"{address} is a link-local address")
    if not address.is_global or address.is_multicast:
        raise _refuse(url, f"{address} is a private or reserved address")


async def resolve_checked(url: str, *, local_ok: bool) -> None:
    """Resolve ``url``'s host and refuse it if any address is one :func:`check_url` bans."""
    check_url(url, local_ok=local_ok)
    parts = urlsplit(url)
    host = parts.hostname or ""
    if _literal(host) is not None:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise _refuse(url, f"cannot resolve {host!r} ({exc})") from None
    for info in infos:
        address = _literal(str(info[4][0]).split("%", 1)[0])
        if address is not None:
            _check_address(url, address, local_ok)


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707, authorization.mdx §Canonical Server
    URI): lower-case scheme and host, no fragment, no query, no trailing slash."""
    parts = urlsplit(url)
    netloc = parts.netloc.lower()
    path = parts.path.rstrip("/")
    return f"{parts.scheme.lower()}://{netloc}{path}"


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-case."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
