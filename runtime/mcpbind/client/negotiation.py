"""Which era a client speaks: the ``initialize`` handshake, or the 2026-07-28 ``server/discover``
probe that falls back to ``initialize`` on the same connection for a legacy server
(transports/stdio.mdx, Backward Compatibility; basic/lifecycle.mdx).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions

from .._lazy import LazyModule
from ..peer_errors import PeerError, RequestTimeout
from ..protocol import UNSUPPORTED_PROTOCOL_VERSION, McpError
from ..protocol.meta import SERVER_INFO, with_meta
from ..versions import (
    AUTO,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_STATELESS,
    STATELESS_VERSIONS,
    is_stateless,
)

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m

    from ..connection import Connection
    from ..protocol import Session
    from .outgoing_meta import OutgoingMeta
else:  # the method table (and the types) imported at the first use (issue 15)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = [
    "Agreement",
    "Offer",
    "UnsupportedVersion",
    "mutual_version",
    "negotiate",
    "probes",
    "use_version",
]

Era = Literal["stateless", "handshake"]


class Offer(msgspec.Struct, frozen=True):
    """What a client proposes: ``version`` (``"auto"``, a handshake version or a stateless
    one), its ``info``, how long the discover probe waits (``probe_timeout``, never longer
    than the request ``timeout``), and whether its first request runs an authorization
    (``authorizing``: it then gets the request timeout, not the probe's)."""

    version: str
    info: t.Implementation
    timeout: float | None
    probe_timeout: float | None
    authorizing: bool = False


class Agreement(msgspec.Struct, frozen=True):
    """What negotiation settled: the era, and what the server said of itself (the version is
    the session's, ``core.version``)."""

    era: Era
    server_capabilities: t.ServerCapabilities
    server_info: t.Implementation | None = None
    instructions: str | None = None


class UnsupportedVersion(McpError):
    """The server answered with protocol versions this client does not speak."""

    def __init__(self, version: str, supported: Sequence[str] = HANDSHAKE_VERSIONS) -> None:
        super().__init__(
            -32602,
            f"Server chose protocol version {version!r}; this client supports {', '.join(supported)}",
            {"supported": list(supported), "requested": version},
        )


def mutual_version(error: PeerError) -> str | None:
    """The version to retry with after the server's ``UnsupportedProtocolVersionError``
    (versioning.mdx §Protocol Version Negotiation: "select a mutually supported version from
    the ``supported`` list and retry"): the newest stateless version this client speaks that
    the list names, the one just refused included (the server's list says it is served);
    None for another error, no list, or nothing in common."""
    data = error.data if isinstance(error.data, dict) else {}
    supported = data.get("supported")
    if error.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(supported, list):
        return None
    return next((v for v in STATELESS_VERSIONS if v in supported), None)


def use_version(core: Session, meta: OutgoingMeta, version: str) -> None:
    """From now on the client speaks stateless ``version``: its per-request ``_meta`` (and so
    the ``MCP-Protocol-Version`` header) and the session say so."""
    meta.use_version(version)
    core.version = version


def probes(offer: str) -> bool:
    """Whether a client offering ``offer`` starts with ``server/discover``."""
    return offer == AUTO or is_stateless(offer)


async def negotiate(
    conn: Connection,
    offer: Offer,
    meta: OutgoingMeta,
    handshake_capabilities: Callable[[], t.ClientCapabilities],
) -> Agreement:
    """Agree on a version with the server on the open connection ``conn``: probe with
    ``server/discover`` (``meta`` then names the version agreed), else run the ``initialize``
    handshake, declaring what ``handshake_capabilities()`` returns (called only then: the
    client sets up what only that era has there)."""
    if probes(offer.version):
        agreed = await _discover(conn, offer, meta)
        if agreed is not None:
            return agreed
        # A legacy server: the same connection runs the handshake (stdio.mdx).
        conn.core.restart_negotiation()
    return await _handshake(conn, offer, handshake_capabilities())


async def _discover(conn: Connection, offer: Offer, meta: OutgoingMeta) -> Agreement | None:
    """Probe with ``server/discover``: the agreement when the server speaks a stateless
    version we do; None (with ``"auto"``) when it is a legacy server."""
    fallback = offer.version == AUTO
    version = LATEST_STATELESS if fallback else offer.version
    core = conn.core
    for attempt in range(2):  # once more with a version from an UnsupportedProtocolVersionError
        meta.use_version(version)
        params = with_meta(m.C2S_DISCOVER, None, meta.fields)
        try:
            # With auth=, the first request carries the whole authorization (discovery,
            # a browser, token requests): it gets the request timeout, not the probe's.
            probe = offer.timeout if offer.authorizing else _probe_deadline(offer)
            result: t.DiscoverResult = await conn.request(
                "server/discover", params, RequestOptions(timeout=probe)
            )
        except PeerError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if data.get("authorization") is True:
                raise  # authorization failed: not a sign of a legacy server
            supported = data.get("supported")
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(supported, list):
                if fallback:
                    return None  # any other error: a legacy server
                raise
            retry = mutual_version(exc)
            if retry is not None and attempt == 0:
                version = retry
                continue
            if fallback and any(v in HANDSHAKE_VERSIONS for v in supported):
                return None
            raise  # the server's -32022, with its list: nothing in common (or refused twice)
        except RequestTimeout:
            if fallback:
                return None  # no answer in time: a legacy server
            raise
        if version not in result.supported_versions:
            if fallback:
                return None
            raise UnsupportedVersion(version, result.supported_versions)
        core.version = version
        core.set_peer_capabilities(result.capabilities)
        server_info = None
        info = (result.meta if isinstance(result.meta, dict) else {}).get(SERVER_INFO)
        if isinstance(info, dict):
            with contextlib.suppress(msgspec.ValidationError):  # display only (discover.mdx)
                server_info = msgspec.convert(info, t.Implementation)
        instructions = result.instructions if isinstance(result.instructions, str) else None
        return Agreement("stateless", result.capabilities, server_info, instructions)
    if fallback:
        return None
    raise UnsupportedVersion(version, STATELESS_VERSIONS)


def _probe_deadline(offer: Offer) -> float | None:
    """The probe waits ``probe_timeout``, never longer than the request ``timeout``."""
    bounds = [b for b in (offer.probe_timeout, offer.timeout) if b is not None]
    return min(bounds) if bounds else None


async def _handshake(conn: Connection, offer: Offer, caps: t.ClientCapabilities) -> Agreement:
    version = LATEST_HANDSHAKE if offer.version == AUTO else offer.version
    params = t.InitializeRequestParams(
        capabilities=caps, client_info=offer.info, protocol_version=version
    )
    result: t.InitializeResult = await conn.request("initialize", params)
    if result.protocol_version not in HANDSHAKE_VERSIONS:
        raise UnsupportedVersion(result.protocol_version)
    conn.core.set_peer_capabilities(result.capabilities)
    instructions = result.instructions if isinstance(result.instructions, str) else None
    agreed = Agreement("handshake", result.capabilities, result.server_info, instructions)
    await conn.notify("notifications/initialized", None)
    return agreed
