"""Which era a client speaks: the ``initialize`` handshake, or the 2026-07-28 ``server/discover``
probe that falls back to ``initialize`` on the same connection for a legacy server
(transports/stdio.mdx, Backward Compatibility; basic/lifecycle.mdx).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import RequestOptions

from .._lazy import LazyModule
from ..peer_errors import PeerError, RequestTimeout
from ..protocol import UNSUPPORTED_PROTOCOL_VERSION, McpError, State
from ..protocol.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    PROTOCOL_VERSION,
    SERVER_INFO,
    with_meta,
)
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

    from ..protocol import Session
    from .client import Client
else:  # the method table (and the types) imported at the first use (issue 15)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = ["UnsupportedVersion", "mutual_version", "negotiate", "probes", "use_version"]


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


def use_version(client: Client, core: Session, version: str) -> None:
    """From now on the client speaks stateless ``version``: its per-request ``_meta`` (and so
    the ``MCP-Protocol-Version`` header) and the session say so."""
    client._meta = _request_meta(client, version)
    core.version = version
    client.protocol_version = version


def probes(offer: str) -> bool:
    """Whether a client offering ``offer`` starts with ``server/discover``."""
    return offer == AUTO or is_stateless(offer)


async def negotiate(client: Client, core: Session) -> str:
    """Agree on a version with the server on the open connection; the era chosen
    (``"stateless"`` or ``"handshake"``)."""
    if probes(client._offer) and await _discover(client, core):
        return "stateless"
    # A legacy server: the same connection runs the handshake (stdio.mdx).
    core.version, core.state = None, State.AWAITING_INIT
    await _handshake(client, core)
    return "handshake"


async def _discover(client: Client, core: Session) -> bool:
    """Probe with ``server/discover``: True when the server speaks a stateless version we
    do; False (with ``"auto"``) when it is a legacy server."""
    fallback = client._offer == AUTO
    version = LATEST_STATELESS if fallback else client._offer
    for attempt in range(2):  # once more with a version from an UnsupportedProtocolVersionError
        client._meta = _request_meta(client, version)
        params = with_meta(m.C2S_DISCOVER, None, client._meta)
        try:
            # With auth=, the first request carries the whole authorization (discovery,
            # a browser, token requests): it gets the request timeout, not the probe's.
            probe = _probe_deadline(client) if client.auth is None else client._timeout
            result: t.DiscoverResult = await client._conn().request(
                "server/discover", params, RequestOptions(timeout=probe)
            )
        except PeerError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            if data.get("authorization") is True:
                raise  # authorization failed: not a sign of a legacy server
            supported = data.get("supported")
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(supported, list):
                if fallback:
                    return False  # any other error: a legacy server
                raise
            retry = mutual_version(exc)
            if retry is not None and attempt == 0:
                version = retry
                continue
            if fallback and any(v in HANDSHAKE_VERSIONS for v in supported):
                return False
            raise  # the server's -32022, with its list: nothing in common (or refused twice)
        except RequestTimeout:
            if fallback:
                return False  # no answer in time: a legacy server
            raise
        if version not in result.supported_versions:
            if fallback:
                return False
            raise UnsupportedVersion(version, result.supported_versions)
        core.version = version
        core.set_peer_capabilities(result.capabilities)
        client.protocol_version = version
        client.server_capabilities = result.capabilities
        meta = result.meta if isinstance(result.meta, dict) else {}
        info = meta.get(SERVER_INFO)
        if isinstance(info, dict):
            with contextlib.suppress(msgspec.ValidationError):  # display only (discover.mdx)
                client.server_info = msgspec.convert(info, t.Implementation)
        if isinstance(result.instructions, str):
            client.instructions = result.instructions
        return True
    if fallback:
        return False
    raise UnsupportedVersion(version, STATELESS_VERSIONS)


def _probe_deadline(client: Client) -> float | None:
    """The probe waits ``probe_timeout``, never longer than the request ``timeout``."""
    bounds = [b for b in (client.probe_timeout, client._timeout) if b is not None]
    return min(bounds) if bounds else None


def _request_meta(client: Client, version: str) -> dict[str, Any]:
    """basic/index.mdx, per-request protocol fields (the log level is added per request)."""
    return {
        PROTOCOL_VERSION: version,
        CLIENT_CAPABILITIES: msgspec.to_builtins(client.capabilities()),
        CLIENT_INFO: msgspec.to_builtins(client._info),
    }


async def _handshake(client: Client, core: Session) -> None:
    offer = LATEST_HANDSHAKE if client._offer == AUTO else client._offer
    caps = client.capabilities()
    h = client.handlers
    asked = (("sampling/createMessage", h.sampling), ("elicitation/create", h.elicitation))
    methods = {name for name, handler in asked if handler is not None}
    if h.tasks and methods:
        from ..tasks.receiver import TaskReceiver

        client.task_receiver = TaskReceiver(methods)
        client.task_receiver.declare(caps)
        core.set_local_capabilities(caps)
        client._stack.push_async_callback(client.task_receiver.aclose)
    params = t.InitializeRequestParams(
        capabilities=caps, client_info=client._info, protocol_version=offer
    )
    result: t.InitializeResult = await client._conn().request("initialize", params)
    if result.protocol_version not in HANDSHAKE_VERSIONS:
        raise UnsupportedVersion(result.protocol_version)
    core.set_peer_capabilities(result.capabilities)
    client.protocol_version = result.protocol_version
    client.server_info = result.server_info
    client.server_capabilities = result.capabilities
    if isinstance(result.instructions, str):
        client.instructions = result.instructions
    await client._conn().notify("notifications/initialized", None)
