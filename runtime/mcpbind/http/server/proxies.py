"""Behind a reverse proxy: the client address a request really comes from.

A proxy (haproxy ``option forwardfor``, nginx ``$proxy_add_x_forwarded_for``) appends the
address it received the request from to ``X-Forwarded-For``. Anyone can send that header,
so it is read only when the peer is a trusted proxy, and then from the right: each trusted
hop is skipped, and the first address that is not a trusted proxy is the client (what the
client wrote itself is further left, never reached past an untrusted hop). A request from an
untrusted peer keeps the peer's address whatever headers it carries.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from ._asgi import OWS, Scope

__all__ = ["TrustedProxies"]

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_HEADER = b"x-forwarded-for"


class TrustedProxies:
    """The proxies whose ``X-Forwarded-For`` is believed: addresses or networks
    (``"10.0.0.7"``, ``"10.0.0.0/8"``, ``"::1"``)."""

    def __init__(self, proxies: Iterable[str]) -> None:
        self.networks: tuple[_Network, ...] = tuple(
            ipaddress.ip_network(p.strip(), strict=False) for p in proxies
        )

    def trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)

    def client_of(self, peer: str, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The client address of a request that ``peer`` sent with ``headers``."""
        if not self.trusts(peer):
            return peer
        hops = [
            hop.strip(OWS)
            for name, value in headers
            if name.lower() == _HEADER
            for hop in value.decode("latin-1").split(",")
        ]
        client = peer
        for hop in reversed(hops):
            try:
                ip: _Address = ipaddress.ip_address(hop)
            except ValueError:
                return client  # not an address: nothing left of it can be believed
            client = str(ip)
            if not any(ip in network for network in self.networks):
                return client
        return client

    def rewrite(self, scope: Scope) -> None:
        """Put the client address in ``scope["client"]``, where per-client limits and the
        server's access log read it."""
        peer = scope.get("client")
        if peer:
            address = self.client_of(str(peer[0]), scope["headers"])
            if address != peer[0]:
                scope["client"] = (address, 0)
