"""DNS-rebinding protection: the ``Host`` and ``Origin`` allowlists (Streamable HTTP,
"Security Warning"). A browser tricked into calling a local server through a hostile name
still sends that name in ``Host`` and the attacker's page in ``Origin``; both are checked.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable

from ._asgi import OWS, Headers, Scope

__all__ = ["HostPolicy", "LOOPBACK_NAMES", "is_loopback_address", "refusal", "split_host"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""The names a loopback-bound server answers to by default, with any port."""


@functools.lru_cache(maxsize=64)
def is_loopback_address(host: str | None) -> bool:
    """Whether a bound address (from the ASGI ``server`` scope) is a loopback one."""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=1024)
def split_host(value: str) -> tuple[str, str | None] | None:
    """``host[:port]`` -> (lower-case host, port or None); ``None`` if malformed.

    Strict on purpose: the port must be digits, so ``localhost:8000.evil.com`` is malformed
    rather than "localhost with a strange port".
    """
    value = value.strip(OWS).lower()
    if not value or any(c <= " " or c in "/\\@?#" for c in value):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        host, colon, port_text = value.partition(":")
        port = port_text if colon else None
    if port is not None and (
        not (port.isascii() and port.isdigit()) or len(port) > 5 or int(port) > 65535
    ):
        return None
    if not host:
        return None
    return host, port


class HostPolicy:
    """Decides whether a request's ``Host`` and ``Origin`` are acceptable.

    ``allowed_hosts``/``allowed_origins`` entries are exact (``"api.example.com"``,
    ``"api.example.com:8443"``, ``"https://app.example.com"``); a host entry without a port
    allows any port. ``None`` means the default: loopback names only when the server is bound
    to a loopback address; otherwise any ``Host``, and an ``Origin`` only when it names the
    same host as ``Host``. Requests without ``Origin`` (non-browser clients) pass the origin
    check; ``Origin: null`` never does.
    """

    __slots__ = ("_hosts", "_origins")

    def __init__(
        self, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None
    ) -> None:
        self._hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        self._origins = (
            None
            if allowed_origins is None
            else frozenset(o.lower().rstrip("/") for o in allowed_origins)
        )

    def host_ok(self, host_header: str | None, loopback: bool) -> bool:
        if self._hosts is None and not loopback:
            return True
        if host_header is None:
            return False
        parsed = split_host(host_header)
        if parsed is None:
            return False
        host, port = parsed
        allowed = self._hosts if self._hosts is not None else LOOPBACK_NAMES
        return host in allowed or (port is not None and f"{host}:{port}" in allowed)

    def origin_ok(self, origin: str | None, host_header: str | None, loopback: bool) -> bool:
        if origin is None:
            return True
        origin = origin.strip(OWS).lower().rstrip("/")
        if self._origins is not None:
            return origin in self._origins
        scheme, sep, rest = origin.partition("://")
        if not sep or scheme not in ("http", "https"):
            return False  # includes "null" (sandboxed frames, file: pages)
        parsed = split_host(rest)
        if parsed is None:
            return False
        host, port = parsed
        if loopback or self._hosts is not None:
            allowed = self._hosts if self._hosts is not None else LOOPBACK_NAMES
            return host in allowed or (port is not None and f"{host}:{port}" in allowed)
        # Bound to a public address with no list: same-origin with Host only.
        return host_header is not None and split_host(host_header) == parsed


def refusal(policy: HostPolicy, scope: Scope, headers: Headers) -> tuple[int, str] | None:
    """The HTTP status and message to refuse a request with before anything else is read (a
    repeated header, a ``Host`` or ``Origin`` the policy does not allow), or ``None``."""
    if headers.duplicates:
        return 400, "Bad Request: repeated header"
    server = scope.get("server")
    loopback = is_loopback_address(server[0] if server else None)
    if not policy.host_ok(headers.get(b"host"), loopback):
        return 421, "Misdirected Request: invalid Host header"
    if not policy.origin_ok(headers.get(b"origin"), headers.get(b"host"), loopback):
        return 403, "Forbidden: invalid Origin header"
    return None
