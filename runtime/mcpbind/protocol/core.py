"""The sans-I/O protocol core: bytes in, events out; calls in, bytes out. No I/O, no anyio.

One :class:`Session` per connection, and the whole state machine in it: the lifecycle
(:mod:`.state`'s transition table), the ids and tables of requests in both directions, the
checks against the method table, the negotiated version and both sides' capabilities. The
async layer feeds every inbound message to :meth:`Session.receive` and writes whatever bytes
the core hands back (``Outgoing`` events and the return values of the
``send_*``/``cancel``/``expire`` calls). The pure steps it uses live in their own modules:
envelopes (:mod:`.wire`), depth checks (:mod:`.depth`), accepting a request (:mod:`.accept`),
capabilities (:mod:`.capabilities`, :mod:`.subcaps`), request ``_meta`` (:mod:`.meta`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, decoder
from mcpbind_types.unified import VERSIONS

from .._lazy import LazyModule, lazy_logger
from ..versions import ALL_VERSIONS, era_of
from . import wire
from .accept import (
    EMPTY_PARAMS,
    StatelessMethodTable,
    capability_refusal,
    decode_params,
    is_modern,
    peek_meta,
)
from .capabilities import has_capability
from .depth import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_META_BYTES,
    exceeds_depth,
    salvage_id,
    salvage_oversized_id,
    shallow_if_valid,
)
from .errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    error_for_exception,
    validation_message,
)
from .events import (
    Cancelled,
    ErrorReceived,
    Event,
    NotificationReceived,
    Outgoing,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
)
from .meta import is_id, progress_token
from .state import ALLOWED_REQUESTS, Role, State, Transition, next_state
from .subcaps import SUBCAPABILITY_METHODS, subcapability_refusal
from .wire import Decoded

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m
else:  # the method table (and the types) imported by the first session (issue 15, cold start)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = ["Session", "SessionOptions"]

logger = lazy_logger("mcpbind.protocol")

_KNOWN_VERSIONS: Final = frozenset(VERSIONS)  # every one has methods in the table
_FIRST_BYTE = re.compile(rb"[ \t\r\n]*(.)", re.DOTALL)

_INPUT_ROUNDS = frozenset(v for v in ALL_VERSIONS if era_of(v).input_rounds)
"""The versions whose era has input rounds (a result may be an ``InputRequiredResult``), as a
set: asked on every result, where a set lookup costs a fraction of ``era_of(v).input_rounds``."""

_INPUT_REQUIRED = b'"input_required"'


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


class _Requested(msgspec.Struct):
    protocol_version: Any = msgspec.field(default="", name="protocolVersion")


def _requested_version(raw: Any) -> str:
    try:
        version = msgspec.json.decode(raw, type=_Requested).protocol_version
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, TypeError):
        return ""
    return version if isinstance(version, str) else ""


_RESULT_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
"""Per result type: its decoder, found by the type alone (``decoder(tp)`` builds a key tuple
and hashes it on every call); one entry per type of the method tables."""

_HOLDS_RESULT_TYPE: set[Any] = set()
"""The result types with a ``result_type`` field of their own (filled with their decoders)."""


def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    """The decoder of ``result_type`` on its first response, kept in :data:`_RESULT_DECODERS`."""
    if "result_type" in getattr(result_type, "__struct_fields__", ()):
        _HOLDS_RESULT_TYPE.add(result_type)
    found = _RESULT_DECODERS[result_type] = decoder(result_type)
    return found


def _decode_result(info: MethodInfo[Any, Any], result: Any) -> Any:
    """A stateless-era response's typed result, for a method whose wire result type is wider
    than its result type (``InputRequiredResult | X``) and whose result type has no
    ``resultType`` of its own (:meth:`Session._on_response` decodes the others); a result
    that cannot be an ``InputRequiredResult`` (its ``resultType`` is absent, so the text holds
    no ``"input_required"``) is decoded straight into its result type, as on the handshake
    era. One that does not fit it after all gets the wire type's decode and error message."""
    if type(result) is msgspec.Raw and _INPUT_REQUIRED not in bytes(result):
        try:
            return decoder(info.result_type).decode(result)
        except msgspec.ValidationError:
            pass
    return decoder(info.wire_result_type).decode(result)


class Session:
    """The protocol state of one connection, for one ``role``.

    ``version`` is the negotiated protocol version. ``None`` means "not negotiated yet": the
    ``initialize`` handshake then runs through the lifecycle states, and the core records the
    version and both sides' capabilities from it. Passing a version skips the handshake.
    """

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

    # -- configuration ---------------------------------------------------------------

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

    def register_method(self, info: MethodInfo[Any, Any]) -> None:
        """Add a method outside the generated tables (a custom or vendor method)."""
        outbound = (info.direction == "client_to_server") == (self.role == "client")
        if outbound:
            self._outbound = {**self._outbound, info.method: info}
        else:
            self._inbound_table = {**self._inbound_table, info.method: info}

    def error_for_exception(self, exc: BaseException) -> McpError:
        return error_for_exception(exc, self.options.debug)

    def pending_ids(self) -> list[RequestId]:
        """Ids of our requests still awaiting a response."""
        return list(self._pending)

    def inflight_ids(self) -> list[RequestId]:
        """Ids of the peer's requests we have not answered yet."""
        return list(self._inbound)

    def restart_negotiation(self) -> None:
        """A client session created in a stateless version whose ``server/discover`` probe
        found a handshake-era server: back to AWAITING_INIT through the transition table, the
        version forgotten, so that the ``initialize`` handshake runs next on the same
        connection (2026-07-28 basic/versioning.mdx §Backward Compatibility with
        Initialization-Based Versions). A closed session stays closed (its next request says
        so); anything else the table has no step for is refused."""
        if self.role != "client":
            raise LocalProtocolError("only a client renegotiates")
        before = self.state
        self._transition(Transition.RENEGOTIATE)
        if self.state is not before:
            self.version = None
        elif before is not State.CLOSED:
            raise LocalProtocolError(f"cannot renegotiate in state {before.value}")

    def outbound_method(self, method: str) -> MethodInfo[Any, Any] | None:
        """The table row our ``method`` requests and notifications go out under (generated,
        or added by :meth:`register_method`), in any protocol version; ``None`` when the
        method is unknown."""
        return self._outbound.get(method)

    # -- outgoing --------------------------------------------------------------------

    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        progress_token: str | int | None = None,
        info: MethodInfo[Any, Any] | None = None,
    ) -> tuple[RequestId, bytes]:
        """Encode a request; the id is fresh for this session and never reused. ``info``
        overrides the table row of an allowed method (e.g. a task-augmented ``tools/call``,
        whose result is a ``CreateTaskResult``)."""
        allowed = self._allowed_requests()
        row = allowed.get(method)
        if row is None:
            row = self._lookup(self._outbound, method)
            if row is None or row.kind == "notification":
                absent = None if row is not None else self._absent(self._outbound, method)
                raise LocalProtocolError(
                    absent or f"{method!r} is not a {self.role}-to-peer request"
                )
            self._check_lifecycle_send(method)
            self.check_send_capability(row)
            allowed[method] = row
        info = row if info is None else info
        if params is None and info.params_required:
            raise LocalProtocolError(f"{method!r} requires params")
        if method in SUBCAPABILITY_METHODS and self.options.enforce_capabilities:
            caps = self._local_caps if info.capability_owner == self.role else self._peer_caps
            refusal = subcapability_refusal(method, params, caps)
            if refusal is not None:
                raise LocalProtocolError(f"{method!r}: {refusal[1]}, which was not declared")
        if progress_token is not None:
            if not is_id(progress_token):
                raise LocalProtocolError("progress tokens are strings or integers")
            if progress_token in self._progress:
                raise LocalProtocolError(f"progress token {progress_token!r} is already in use")
            params = _with_progress_token(info, params, progress_token)
        request_id = self._next_id
        data = wire.encode_request(request_id, method, params)
        self._next_id += 1
        self._pending[request_id] = _Pending(info, progress_token)
        if progress_token is not None:
            self._progress[progress_token] = request_id
        if method == "initialize":
            self._transition(Transition.INIT_REQUEST)
        return request_id, data

    def send_notification(self, method: str, params: Any = None) -> bytes:
        info = self._lookup(self._outbound, method)
        if info is None or info.kind != "notification":
            absent = None if info is not None else self._absent(self._outbound, method)
            raise LocalProtocolError(
                absent or f"{method!r} is not a {self.role}-to-peer notification"
            )
        if self.state is State.CLOSED:
            raise LocalProtocolError("the session is closed")
        self.check_send_capability(info)
        data = wire.encode_notification(method, params)
        if method == "notifications/initialized":
            self._transition(Transition.INITIALIZED)
        return data

    def send_progress(
        self,
        token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bytes:
        """A ``notifications/progress`` for a token the peer gave in one of its requests."""
        params = t.ProgressNotificationParams(
            progress_token=token,
            progress=progress,
            total=msgspec.UNSET if total is None else total,
            message=msgspec.UNSET if message is None else message,
        )
        return self.send_notification("notifications/progress", params)

    def send_response(self, request_id: RequestId, result: Any) -> bytes | None:
        """The result for an inbound request, or ``None`` when it must not be sent (already
        answered, cancelled by the peer, or unknown): counted and logged, never raised."""
        entry = self._answerable(request_id)
        if entry is None:
            return None
        data = wire.encode_result(request_id, result)
        del self._inbound[request_id]
        if entry.method == "initialize":
            version = _field(result, "protocol_version", "protocolVersion")
            if isinstance(version, str):
                self.version = version
            if self._local_caps is None:
                caps = _field(result, "capabilities", "capabilities")
                if caps is not None:
                    self.set_local_capabilities(caps)
            self._transition(Transition.INIT_RESULT)
        return data

    def send_error(self, request_id: RequestId, error: McpError) -> bytes | None:
        """An error response for an inbound request; same at-most-once rule as send_response."""
        entry = self._answerable(request_id)
        if entry is None:
            return None
        try:
            data = wire.encode_error(request_id, error)
        except (TypeError, msgspec.EncodeError):
            logger.warning("error data for request %r is not JSON-encodable; dropped", request_id)
            data = wire.encode_error(request_id, McpError(error.code, error.message))
        del self._inbound[request_id]
        if entry.method == "initialize":
            self._transition(Transition.INIT_FAILED)
        return data

    def release(self, request_id: RequestId) -> None:
        """Forget an inbound request without answering (e.g. after the peer cancelled it)."""
        if is_id(request_id):
            self._inbound.pop(request_id, None)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Give up on one of our requests: forget it and return ``notifications/cancelled``.

        ``None`` for an unknown/finished id, and for ``initialize`` (which MUST NOT be
        cancelled, basic/utilities/cancellation.mdx); its pending entry is still dropped.
        """
        pending = self._pending.pop(request_id, None) if is_id(request_id) else None
        if pending is None:
            return None
        if pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)
        if pending.info.method == "initialize":
            self._transition(Transition.INIT_FAILED)
            return None
        params = t.CancelledNotificationParams(
            request_id=request_id, reason=msgspec.UNSET if reason is None else reason
        )
        return wire.encode_notification("notifications/cancelled", params)

    def expire(self, request_id: RequestId) -> bytes | None:
        """A timeout: :meth:`cancel` with reason ``"timeout"``."""
        return self.cancel(request_id, "timeout")

    def fail_all(self, exc: McpError | None = None) -> list[ErrorReceived]:
        """The peer is gone: fail every pending request at once and close the session."""
        events = self.fail_pending(exc)
        self._inbound.clear()
        self._transition(Transition.CLOSE)
        return events

    def fail_pending(self, exc: McpError | None = None) -> list[ErrorReceived]:
        """The peer sends no more (its input ended, it may still read): fail every pending
        request of ours at once; the requests it sent are still owed their answers."""
        error = exc if exc is not None else McpError(CONNECTION_CLOSED, "Connection closed")
        events = [ErrorReceived(rid, p.info.method, error) for rid, p in self._pending.items()]
        self._pending.clear()
        self._progress.clear()
        return events

    # -- incoming --------------------------------------------------------------------

    def receive(self, data: bytes) -> list[Event]:
        """Parse one transport message (an object, or a batch where allowed) into events."""
        events: list[Event] = []
        if type(data) is Decoded:  # classified (and depth-checked) by the HTTP transport
            self._receive_envelope(data.envelope, events)
            return events
        limit = self.options.max_depth
        size = len(data)
        # An object that decodes and is short enough for its depth (shallow_if_valid, its
        # usual answers inline: no longer than twice the limit, or five times without a
        # ``[``) is not scanned. One that does not decode is checked before its error is
        # chosen (a run of unclosed brackets is refused for its depth, as a longer one is).
        if (
            size > limit
            and (
                type(data) is not bytes
                or data[:1] != b"{"
                or (
                    size > 2 * limit
                    and (size + 3 > 5 * limit or data.find(b"[") >= 0)
                    and not shallow_if_valid(data, limit)
                )
            )
            and self._too_deep(data, limit, events)
        ):
            return events
        if data[:1] == b"{":  # the usual case: one object, no leading whitespace
            self._receive_one(data, events, limit)
            return events
        first = _FIRST_BYTE.match(data)
        if first is not None and first.group(1) == b"[":
            self._receive_batch(data, events)
        else:
            self._receive_one(data, events)
        return events

    def _too_deep(self, data: bytes, limit: int, events: list[Event]) -> bool:
        """Refuse ``data`` if it nests deeper than ``limit``."""
        if exceeds_depth(data, limit):
            message = f"Invalid Request: JSON nesting exceeds {limit} levels"
            self._refuse(data, events, INVALID_REQUEST, message)
            return True
        return False

    def refuse_oversized(self, head: bytes, tail: bytes, limit: int) -> list[Event]:
        """A message over the transport's size limit was dropped (only its ``head`` and
        ``tail`` bytes kept): answer it like :meth:`_refuse` does an undecodable one."""
        events: list[Event] = []
        message = f"Message too large: over {limit} bytes"
        rid, is_request = salvage_oversized_id(head, tail)
        self._refuse_id(rid, is_request, events, INVALID_REQUEST, message)
        return events

    def _refuse(self, data: bytes, events: list[Event], code: int, message: str) -> None:
        """Answer an undecodable message on the request it carries when its id is readable,
        fail our pending call when it is a response to one, else answer with ``id: null``."""
        rid, is_request = salvage_id(data)
        self._refuse_id(rid, is_request, events, code, message)

    def _refuse_id(
        self,
        rid: RequestId | None,
        is_request: bool,
        events: list[Event],
        code: int,
        message: str,
    ) -> None:
        pending = None if rid is None or is_request else self._pending.pop(rid, None)
        if pending is not None and rid is not None:
            if pending.progress_token is not None:
                self._progress.pop(pending.progress_token, None)
            method = pending.info.method
            if method == "initialize":
                self._transition(Transition.INIT_FAILED)
            failure = RemoteProtocolError(code, f"Unreadable result for {method}: {message}")
            events.append(ErrorReceived(rid, method, failure))
            return
        self._reply_error(events, rid if is_request else None, code, message)

    def _receive_batch(self, data: bytes, events: list[Event]) -> None:
        if not era_of(self.version).batches:
            message = f"Invalid Request: JSON-RPC batches are not supported in protocol version {self.version}"
            self._reply_error(events, None, INVALID_REQUEST, message)
            return
        try:
            items = wire.BATCH_DECODER.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:
            self._reply_error(events, None, PARSE_ERROR, f"Parse error: {exc}")
            return
        if not items:
            self._reply_error(events, None, INVALID_REQUEST, "Invalid Request: empty batch")
            return
        for item in items:
            self._receive_one(item, events)

    def _receive_one(
        self, data: bytes | msgspec.Raw, events: list[Event], depth_limit: int = 0
    ) -> None:
        """One message; ``depth_limit``: one that does not decode is refused for its depth
        first when it nests deeper (a run of unclosed brackets, as a longer one would be)."""
        try:
            env = wire.ENVELOPE_DECODER.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
            if (
                depth_limit
                and type(data) is bytes
                and len(data) > depth_limit
                and self._too_deep(data, depth_limit, events)
            ):
                return
            if isinstance(exc, msgspec.ValidationError):
                self._reply_error(events, None, INVALID_REQUEST, f"Invalid Request: {exc}")
            else:  # a bad escape or byte deep inside still leaves the id readable (depth.py)
                self._refuse(bytes(data), events, PARSE_ERROR, f"Parse error: {exc}")
            return
        self._receive_envelope(env, events)

    def _receive_envelope(self, env: wire.Envelope, events: list[Event]) -> None:
        rid = env.id
        if (
            type(rid) is int
            and env.method is UNSET
            and env.error is UNSET
            and env.result is not UNSET
            and env.jsonrpc == "2.0"
        ):  # a result with an integer id, what a client mostly receives: classified first
            self._on_response(rid, env.result, UNSET, events)
            return
        # The decoder never yields bools for ``id`` (msgspec keeps them out of ``int``).
        rid = env.id if isinstance(env.id, (int, str)) else None
        if env.jsonrpc != "2.0":
            self._reply_error(
                events, rid, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"'
            )
        elif isinstance(env.method, str):
            if env.result is not msgspec.UNSET or env.error is not msgspec.UNSET:
                message = "Invalid Request: a request must not carry result or error"
                self._reply_error(events, rid, INVALID_REQUEST, message)
            elif env.id is msgspec.UNSET:
                self._on_notification(env.method, env.params, events)
            elif rid is None:
                self._reply_error(events, None, INVALID_REQUEST, "Invalid Request: id is null")
            else:
                self._on_request(rid, env.method, env.params, events)
        elif env.result is msgspec.UNSET and env.error is msgspec.UNSET:
            message = "Invalid Request: not a request, notification or response"
            self._reply_error(events, rid, INVALID_REQUEST, message)
        elif env.id is None:
            err = env.error
            detail = f"[{err.code}] {err.message}" if isinstance(err, wire.WireError) else "?"
            logger.warning("peer sent an error response with a null id: %s", detail)
            self.dropped_responses += 1
        elif rid is None:
            message = "Invalid Request: a response needs an id"
            self._reply_error(events, None, INVALID_REQUEST, message)
        else:
            self._on_response(rid, env.result, env.error, events)

    def _on_request(
        self, rid: RequestId, method: str, raw: msgspec.Raw | Any, events: list[Event]
    ) -> None:
        if rid in self._inbound:
            message = f"Invalid Request: request id {rid!r} is already in flight"
            self._reply_error(events, rid, INVALID_REQUEST, message)
            return
        era = self.stateless
        if (
            era is not None
            and self.state is State.AWAITING_INIT
            and self._on_stateless_request(era, rid, method, raw, events)
        ):
            return
        accepted = self._accepted_methods()
        known = accepted.get(method)
        if known is None:
            known = self._accept_method(rid, method, events)
            if known is None:
                return
            accepted[method] = known
        info = known[0]
        try:
            params = decode_params(known, raw, self.options.max_meta_bytes)
        except McpError as exc:
            self._reply_error(events, rid, exc.code, exc.message)
            return
        if method in SUBCAPABILITY_METHODS and self.options.enforce_capabilities:
            refusal = subcapability_refusal(method, params, self._local_caps)
            if refusal is not None:  # elicitation.mdx §Error Handling: -32602
                self._reply_error(events, rid, INVALID_PARAMS, f"Invalid params: {refusal[1]}")
                return
        self._inbound[rid] = _Inbound(method)
        if method == "initialize":
            self.set_peer_capabilities(getattr(params, "capabilities", None))
            self._transition(Transition.INIT_REQUEST)
        token = progress_token(getattr(params, "meta", None))
        events.append(RequestReceived(rid, method, params, info, token))

    def _accept_method(
        self, rid: RequestId, method: str, events: list[Event]
    ) -> tuple[MethodInfo[Any, Any], msgspec.json.Decoder[Any] | None] | None:
        """Check an inbound request's method (table, version, lifecycle, capability): its row and
        params decoder, or ``None`` after queueing the error response."""
        info = self._lookup(self._inbound_table, method)
        if info is None or info.kind == "notification":
            absent = None if info is not None else self._absent(self._inbound_table, method)
            message = f"Method not found: {absent or method}"
            self._reply_error(events, rid, METHOD_NOT_FOUND, message)
            return None
        refusal = self._lifecycle_refusal(method)
        if refusal is not None:
            self._reply_error(events, rid, INVALID_REQUEST, refusal)
            return None
        if self.options.enforce_capabilities:
            denied = capability_refusal(info, self.role, self._local_caps)
            if denied is not None:
                self._reply_error(events, rid, denied.code, denied.message)
                return None
        return info, None if info.params_type is None else decoder(info.params_type)

    def _on_stateless_request(
        self, era: StatelessMethodTable, rid: RequestId, method: str, raw: Any, events: list[Event]
    ) -> bool:
        """A 2026-07-28 request on a connection that has not done the handshake
        (basic/versioning.mdx, dual-era server): accepted and decoded by the era's rules, and
        in flight here like any other request. ``False``: no such request (a handshake-era
        message, left to the lifecycle rules)."""
        if method == "initialize":
            if is_modern(peek_meta(raw)):
                self._reply_error(events, rid, METHOD_NOT_FOUND, "Method not found: initialize")
                return True
            if era.handshake:
                return False
            # versioning.mdx: a modern-only server names its versions to legacy clients.
            requested = _requested_version(raw)
            supported = list(era.supported)
            error = McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"This server speaks only protocol {', '.join(supported)} (no initialize)",
                {"supported": supported, "requested": requested},
            )
            events.append(Outgoing(wire.encode_error(rid, error)))
            return True
        try:
            decoded = era.decode(method, raw, self.options.max_meta_bytes)
        except McpError as exc:
            events.append(Outgoing(wire.encode_error(rid, exc)))
            return True
        if decoded is None:
            return False
        info, params, meta = decoded
        self._inbound[rid] = _Inbound(method)
        events.append(RequestReceived(rid, method, params, info, meta.progress_token, meta))
        return True

    def _on_notification(self, method: str, raw: msgspec.Raw | Any, events: list[Event]) -> None:
        info = self._lookup(self._inbound_table, method)
        if info is None or info.kind != "notification":
            logger.info("dropped unknown notification %r", method)
            return
        try:
            params = self._decode_params(info, raw)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
            logger.warning("dropped %r: invalid params: %s", method, exc)
            return
        if isinstance(params, t.CancelledNotificationParams):
            self._on_cancelled(params, events)
        elif isinstance(params, t.ProgressNotificationParams):
            token = params.progress_token
            events.append(
                ProgressReceived(
                    token,
                    params.progress,
                    None if params.total is msgspec.UNSET else params.total,
                    None if params.message is msgspec.UNSET else params.message,
                    self._progress.get(token),
                )
            )
        else:
            if method == "notifications/initialized" and self.role == "server":
                self._transition(Transition.INITIALIZED)
            events.append(NotificationReceived(method, params, info))

    def _on_cancelled(self, params: t.CancelledNotificationParams, events: list[Event]) -> None:
        rid = params.request_id
        entry = None if isinstance(rid, msgspec.UnsetType) else self._inbound.get(rid)
        if (
            isinstance(rid, msgspec.UnsetType)
            or entry is None
            or entry.cancelled
            or entry.method == "initialize"
        ):
            logger.debug("ignored cancellation of %r (unknown, finished or initialize)", rid)
            return
        entry.cancelled = True
        reason = None if params.reason is msgspec.UNSET else params.reason
        events.append(Cancelled(rid, reason))

    def _on_response(self, rid: RequestId, result: Any, error: Any, events: list[Event]) -> None:
        pending = self._pending.pop(rid, None)
        if pending is None:
            logger.info("dropped a response for unknown or finished request id %r", rid)
            self.dropped_responses += 1
            return
        if pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)
        info = pending.info
        method = info.method
        failure: McpError
        if error is UNSET:  # a result, the usual case: checked in the fewest steps
            try:
                plain = info.result_type
                straight = _RESULT_DECODERS.get(plain) or _result_decoder(plain)
                if info.wire_result_type is plain or self.version not in _INPUT_ROUNDS:
                    value = straight.decode(result)
                elif plain in _HOLDS_RESULT_TYPE and type(result) is msgspec.Raw:
                    # 2026-07-28, a type holding resultType itself (tools/call's): decoded
                    # straight, an input round told by its value (no search of the bytes);
                    # one that does not fit gets the wire type's decode and error message.
                    try:
                        value = straight.decode(result)
                    except msgspec.ValidationError:
                        value = decoder(info.wire_result_type).decode(result)
                    else:
                        if value.result_type == "input_required":
                            value = decoder(info.wire_result_type).decode(result)
                else:
                    value = _decode_result(info, result)
            except msgspec.ValidationError as exc:
                message = f"Invalid result for {method}: {validation_message(exc, 'result')}"
                failure = RemoteProtocolError(INTERNAL_ERROR, message)
            except (msgspec.DecodeError, RecursionError) as exc:
                failure = RemoteProtocolError(PARSE_ERROR, f"Unreadable result for {method}: {exc}")
            else:
                if method == "initialize":
                    self.version = value.protocol_version
                    self.set_peer_capabilities(value.capabilities)
                    self._transition(Transition.INIT_RESULT)
                events.append(ResponseReceived(rid, method, value))
                return
        elif result is not UNSET:
            failure = RemoteProtocolError(
                INVALID_REQUEST, "Invalid response: carries both result and error"
            )
        else:  # the envelope's error object (a WireError)
            data = None if error.data is UNSET else error.data
            failure = McpError(error.code, error.message, data)
        if method == "initialize":
            self._transition(Transition.INIT_FAILED)
        events.append(ErrorReceived(rid, method, failure))

    # -- checks shared by both directions --------------------------------------------

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
        data = EMPTY_PARAMS if raw is msgspec.UNSET else raw
        return decoder(info.params_type).decode(data)

    def _answerable(self, request_id: RequestId) -> _Inbound | None:
        entry = self._inbound.get(request_id) if is_id(request_id) else None
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

    def check_send_capability(self, info: MethodInfo[Any, Any]) -> None:
        """Refuse (:class:`LocalProtocolError`) to send ``info``'s method when its capability
        was not declared by the side that serves it; nothing to say when it was."""
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


def _to_builtins(caps: object) -> dict[str, Any] | None:
    if caps is None:
        return None
    value = caps if isinstance(caps, Mapping) else msgspec.to_builtins(caps)
    if not isinstance(value, Mapping):
        raise TypeError(f"capabilities must be a Struct or a mapping, not {type(caps).__name__}")
    return dict(value)


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
