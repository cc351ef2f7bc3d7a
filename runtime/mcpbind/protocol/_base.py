"""Session state shared by the receive and send halves: tables, options and checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from mcpbind_types._common import MethodInfo, decoder, join_error_path
from mcpbind_types.unified import VERSIONS

from .._lazy import LazyModule, lazy_logger
from . import wire
from .depth import DEFAULT_MAX_DEPTH, DEFAULT_MAX_META_BYTES
from .errors import (
    LocalProtocolError,
    McpError,
    error_for_exception,
)
from .events import (
    Event,
    Outgoing,
    RequestId,
)
from .meta import _is_id

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m

    from .accept import StatelessMethodTable
else:  # the method table (and the types) imported by the first session (issue 15, cold start)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")
from .state import ALLOWED_REQUESTS, Role, State, Transition, next_state

__all__ = [
    "SessionBase",
    "SessionOptions",
    "has_capability",
]
logger = lazy_logger("mcpbind.protocol")

_KNOWN_VERSIONS: Final = frozenset(VERSIONS)  # every one has methods in the table
_FIRST_BYTE = re.compile(rb"[ \t\r\n]*(.)", re.DOTALL)
_EMPTY_OBJECT = b"{}"


# The records here are msgspec Structs, not dataclasses: a dataclass compiles source when it
# is defined, at import time (issue 15, cold start); a Struct is also quicker to create.
class SessionOptions(msgspec.Struct, frozen=True, kw_only=True):
    max_depth: int = DEFAULT_MAX_DEPTH
    """Messages nesting deeper than this are rejected before decoding (-32600)."""
    enforce_capabilities: bool = True
    """Refuse to send, and answer -32601 to, methods whose capability was not declared."""
    enforce_lifecycle: bool = True
    """Gate requests on the initialization state (basic/lifecycle.mdx)."""
    debug: bool = False
    """Let :meth:`Session.error_for_exception` include exception text."""
    max_inflight: int = 64
    """Inbound requests handled at once on this session; more are refused at once (-32603
    "Server busy"), so a peer cannot make the server hold unbounded work and params."""
    max_meta_bytes: int = DEFAULT_MAX_META_BYTES
    """Largest ``_meta`` object an inbound request may carry (it is decoded and held while
    the handler runs); larger is -32602. Checked only for params bigger than this."""


class _Pending(msgspec.Struct):
    info: MethodInfo[Any, Any]
    progress_token: str | int | None


class _Inbound(msgspec.Struct):
    method: str
    cancelled: bool = False


def custom_method(
    method: str,
    direction: Literal["client_to_server", "server_to_client"],
    kind: Literal["request", "notification"] = "request",
) -> MethodInfo[dict[str, Any], Any]:
    """A method-table row for a custom method: params are a JSON object, the result any JSON."""
    return MethodInfo(
        method=method,
        direction=direction,
        kind=kind,
        message_type=None,
        params_type=dict[str, Any],
        params_required=False,
        result_type=Any if kind == "request" else None,
        wire_result_type=Any if kind == "request" else None,
        capability_owner=None,
        capability=None,
        versions=(),
    )


def _to_builtins(caps: object) -> dict[str, Any] | None:
    if caps is None:
        return None
    value = caps if isinstance(caps, Mapping) else msgspec.to_builtins(caps)
    if not isinstance(value, Mapping):
        raise TypeError(f"capabilities must be a Struct or a mapping, not {type(caps).__name__}")
    return dict(value)


def has_capability(caps: Mapping[str, Any] | None, path: tuple[str, ...]) -> bool:
    """Whether ``caps`` declares ``path`` (every key present; the leaf not ``None``/``False``).

    ``elicitation: {}`` reads as ``{"form": {}}`` (client/elicitation.mdx §Capabilities: an
    empty object declares form mode only, for backwards compatibility)."""
    node: Any = caps
    for key in path:
        if not isinstance(node, Mapping):
            return False
        if key not in node:
            return key == "form" and path[0] == "elicitation" and node == {}
        node = node[key]
    return node is not None and node is not False


def _validation_message(exc: msgspec.ValidationError, root: str) -> str:
    # msgspec reports paths from the decoded value ("- at `$.name`"); join the halves reported
    # from inside unions and raw-JSON checks, then anchor the path in the message.
    return join_error_path(str(exc)).replace("at `$", f"at `$.{root}")


class SessionBase:
    """The protocol state of one connection; see :class:`mcpbind.protocol.core.Session`."""

    def __init__(
        self, role: Role, version: str | None = None, options: SessionOptions | None = None
    ) -> None:
        if role not in ("client", "server"):
            raise ValueError(f"role must be 'client' or 'server', not {role!r}")
        self.role: Final[Role] = role
        self.options: SessionOptions = options or SessionOptions()
        self.version: str | None = version
        self.state: State = State.AWAITING_INIT if version is None else State.OPERATING
        self._outbound: Mapping[str, MethodInfo[Any, Any]] = (
            m.CLIENT_TO_SERVER if role == "client" else m.SERVER_TO_CLIENT
        )
        self._inbound_table: Mapping[str, MethodInfo[Any, Any]] = (
            m.SERVER_TO_CLIENT if role == "client" else m.CLIENT_TO_SERVER
        )
        self._next_id = 1
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[str | int, RequestId] = {}
        self._inbound: dict[RequestId, _Inbound] = {}
        self._local_caps: dict[str, Any] | None = None
        self._peer_caps: dict[str, Any] | None = None
        #: Responses from the peer for unknown or finished ids (dropped).
        self.dropped_responses = 0
        #: Our own responses suppressed: second response, cancelled or unknown request id.
        self.suppressed_responses = 0
        #: Inbound methods that passed every check (table, version, lifecycle, capability),
        #: with their params decoder; valid while what those checks read stays the same.
        self._accepted: dict[str, tuple[MethodInfo[Any, Any], msgspec.json.Decoder[Any] | None]]
        self._accepted = {}
        self._accepted_for: tuple[object, ...] = ()
        #: The same for requests we send (table, version, lifecycle, both capability sets).
        self._allowed: dict[str, MethodInfo[Any, Any]] = {}
        self._allowed_for: tuple[object, ...] = ()
        #: A server that also serves 2026-07-28 requests (without the handshake) sets this.
        self.stateless: StatelessMethodTable | None = None

    # -- configuration -------------------------------------------------------------------

    def set_local_capabilities(self, caps: object) -> None:
        """What we declared (a capabilities Struct or dict)."""
        self._local_caps = _to_builtins(caps)

    def set_peer_capabilities(self, caps: object) -> None:
        """What the peer declared (a capabilities Struct or dict)."""
        self._peer_caps = _to_builtins(caps)

    @property
    def local_capabilities(self) -> dict[str, Any] | None:
        return self._local_caps

    @property
    def peer_capabilities(self) -> dict[str, Any] | None:
        return self._peer_caps

    def error_for_exception(self, exc: BaseException) -> McpError:
        return error_for_exception(exc, self.options.debug)

    def pending_ids(self) -> list[RequestId]:
        """Ids of our requests still awaiting a response."""
        return list(self._pending)

    def inflight_ids(self) -> list[RequestId]:
        """Ids of the peer's requests we have not answered yet."""
        return list(self._inbound)

    # -- helpers -------------------------------------------------------------------------

    def _lookup(
        self, table: Mapping[str, MethodInfo[Any, Any]], method: str
    ) -> MethodInfo[Any, Any] | None:
        info = table.get(method)
        if (
            info is not None
            and info.versions  # custom methods (no versions) exist in every version
            and self.version in _KNOWN_VERSIONS
            and self.version not in info.versions
            and not self._declared_by_owner(info)
        ):
            return None
        return info

    def _declared_by_owner(self, info: MethodInfo[Any, Any]) -> bool:
        """Whether the side that serves ``info`` declared its capability. A method newer than
        the negotiated version (``elicitation/create`` on 2025-03-26) is still exchanged then:
        both official SDKs gate such methods on the declared capability, not on the version,
        so a peer that declared one gets it answered instead of refused."""
        if info.capability is None:
            return False
        caps = self._local_caps if info.capability_owner == self.role else self._peer_caps
        return has_capability(caps, info.capability)

    def _absent(self, table: Mapping[str, MethodInfo[Any, Any]], method: str) -> str | None:
        """Why a known method is unavailable on this version: ``None`` when it is unknown."""
        info = table.get(method)
        if info is None or self.version not in _KNOWN_VERSIONS:
            return None
        why = f"{method!r} is not in protocol version {self.version}"
        if info.capability is not None:
            whose = "we" if info.capability_owner == self.role else f"the {info.capability_owner}"
            why += f" and {whose} did not declare {'.'.join(info.capability)!r}"
        return why

    def register_method(self, info: MethodInfo[Any, Any]) -> None:
        """Add a method outside the generated tables (a custom or vendor method)."""
        outbound = (info.direction == "client_to_server") == (self.role == "client")
        if outbound:
            self._outbound = {**self._outbound, info.method: info}
        else:
            self._inbound_table = {**self._inbound_table, info.method: info}

    def _accepted_methods(
        self,
    ) -> dict[str, tuple[MethodInfo[Any, Any], msgspec.json.Decoder[Any] | None]]:
        """The cache of accepted inbound methods, emptied when anything the checks read changed
        (state, version, our capabilities, the method table, the options)."""
        key = self._accepted_for
        if (
            not key
            or key[0] is not self.state
            or key[1] is not self.version
            or key[2] is not self._local_caps
            or key[3] is not self._inbound_table
            or key[4] is not self.options
        ):
            self._accepted = {}
            self._accepted_for = (
                self.state,
                self.version,
                self._local_caps,
                self._inbound_table,
                self.options,
            )
        return self._accepted

    def _allowed_requests(self) -> dict[str, MethodInfo[Any, Any]]:
        """The cache of requests we may send, emptied when anything the checks read changed."""
        key = self._allowed_for
        if (
            not key
            or key[0] is not self.state
            or key[1] is not self.version
            or key[2] is not self._local_caps
            or key[3] is not self._peer_caps
            or key[4] is not self._outbound
            or key[5] is not self.options
        ):
            self._allowed = {}
            self._allowed_for = (
                self.state,
                self.version,
                self._local_caps,
                self._peer_caps,
                self._outbound,
                self.options,
            )
        return self._allowed

    def _decode_params(self, info: MethodInfo[Any, Any], raw: msgspec.Raw | Any) -> Any:
        if info.params_type is None:
            return None
        data = _EMPTY_OBJECT if raw is msgspec.UNSET else raw
        return decoder(info.params_type).decode(data)

    def _answerable(self, request_id: RequestId) -> _Inbound | None:
        kind = type(request_id)  # _is_id(request_id), its usual case inlined
        entry = (
            self._inbound.get(request_id)
            if kind is int or kind is str or _is_id(request_id)
            else None
        )
        if entry is None or entry.cancelled:
            if entry is not None:
                del self._inbound[request_id]
            why = "cancelled" if entry is not None else "unknown or already answered"
            logger.warning("suppressed a response for request id %r (%s)", request_id, why)
            self.suppressed_responses += 1
            return None
        return entry

    def _reply_error(
        self, events: list[Event], rid: RequestId | None, code: int, message: str
    ) -> None:
        events.append(Outgoing(wire.encode_error(rid, McpError(code, message))))

    def _transition(self, transition: Transition) -> None:
        self.state = next_state(self.state, transition)

    def _check_lifecycle_send(self, method: str) -> None:
        if self.state is State.CLOSED:
            raise LocalProtocolError("the session is closed")
        if not self.options.enforce_lifecycle:
            return
        allowed = ALLOWED_REQUESTS[(self.role, self.state)]
        if allowed is None:
            if method == "initialize":
                raise LocalProtocolError("the session is already initialized")
        elif method not in allowed:
            raise LocalProtocolError(
                f"cannot send {method!r} in state {self.state.value} (lifecycle.mdx: only "
                f"{', '.join(sorted(allowed)) or 'nothing'} before initialization completes)"
            )

    def _lifecycle_refusal(self, method: str) -> str | None:
        if self.role != "server" or not self.options.enforce_lifecycle:
            return None
        allowed = ALLOWED_REQUESTS[("client", self.state)]
        if allowed is None:
            return "Invalid Request: already initialized" if method == "initialize" else None
        if method in allowed:
            return None
        if method == "initialize":
            return "Invalid Request: initialization already in progress"
        return f"Invalid Request: server not initialized (received {method!r} before the initialization finished)"

    def _check_send_capability(self, info: MethodInfo[Any, Any]) -> None:
        if not self.options.enforce_capabilities or info.capability is None:
            return
        owner = info.capability_owner
        caps = self._local_caps if owner == self.role else self._peer_caps
        if not has_capability(caps, info.capability):
            whose = "we" if owner == self.role else f"the {owner}"
            raise LocalProtocolError(
                f"{info.method!r} needs the {owner} capability "
                f"{'.'.join(info.capability)!r}, which {whose} did not declare"
            )


def _field(obj: Any, attr: str, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, attr, None)


def _with_progress_token(info: MethodInfo[Any, Any], params: Any, token: str | int) -> Any:
    """``params`` with ``_meta.progressToken`` set (basic/utilities/progress.mdx)."""
    if params is None:
        if info.params_type is None:
            raise LocalProtocolError(f"{info.method!r} takes no params to carry a progress token")
        try:
            return info.params_type(meta={"progressToken": token})
        except TypeError:
            return {"_meta": {"progressToken": token}}
    if isinstance(params, Mapping):
        meta = _meta_copy(params.get("_meta"))
        meta["progressToken"] = token
        return {**params, "_meta": meta}
    meta_value = getattr(params, "meta", msgspec.UNSET)
    if not hasattr(params, "meta"):
        raise LocalProtocolError(f"cannot attach a progress token to {type(params).__name__}")
    meta = _meta_copy(None if meta_value is msgspec.UNSET else meta_value)
    meta["progressToken"] = token
    return msgspec.structs.replace(params, meta=meta)


def _meta_copy(meta: Any) -> dict[str, Any]:
    """A new dict of a ``_meta`` value: ``None``, a mapping, or its JSON already encoded (a
    2026-07-28 client's per-request fields, :func:`mcpbind.protocol.meta.with_meta`)."""
    if meta is None:
        return {}
    if type(meta) is msgspec.Raw:
        decoded: dict[str, Any] = msgspec.json.decode(meta)
        return decoded
    return dict(meta)
