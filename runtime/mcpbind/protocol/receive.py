"""The receive half: classify inbound bytes into events and answer malformed traffic."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, decoder

from ..versions import ALL_VERSIONS, era_of
from . import wire
from ._base import (
    _FIRST_BYTE,
    SessionBase,
    _Inbound,
    _validation_message,
    logger,
)
from .accept import StatelessMethodTable, capability_refusal, decode_params, is_modern, peek_meta
from .depth import exceeds_depth, salvage_id, salvage_oversized_id, shallow_if_valid
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    RemoteProtocolError,
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
from .meta import progress_token
from .state import State, Transition
from .subcaps import SUBCAPABILITY_METHODS, subcapability_refusal
from .wire import Decoded

__all__ = ["Receiver"]


class _Requested(msgspec.Struct):
    protocol_version: Any = msgspec.field(default="", name="protocolVersion")


def _requested_version(raw: Any) -> str:
    try:
        version = msgspec.json.decode(raw, type=_Requested).protocol_version
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, TypeError):
        return ""
    return version if isinstance(version, str) else ""


_INPUT_ROUNDS = frozenset(v for v in ALL_VERSIONS if era_of(v).input_rounds)
"""The versions whose era has input rounds (a result may be an ``InputRequiredResult``), as a
set: asked on every result, where a set lookup costs a fraction of ``era_of(v).input_rounds``."""


_INPUT_REQUIRED = b'"input_required"'


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
    ``resultType`` of its own (:meth:`Receiver._on_response` decodes the others); a result
    that cannot be an ``InputRequiredResult`` (its ``resultType`` is absent, so the text holds
    no ``"input_required"``) is decoded straight into its result type, as on the handshake
    era. One that does not fit it after all gets the wire type's decode and error message."""
    if type(result) is msgspec.Raw and _INPUT_REQUIRED not in bytes(result):
        try:
            return decoder(info.result_type).decode(result)
        except msgspec.ValidationError:
            pass
    return decoder(info.wire_result_type).decode(result)


class Receiver(SessionBase):
    """Everything :meth:`receive` does; the send half lives in :class:`Session`."""

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
            # few brackets cannot nest deeply: counted first (exceeds_depth's own first test)
            and (type(data) is not bytes or data.count(b"[") + data.count(b"{") > limit)
            and self._too_deep(data, limit, events)
        ):
            return events
        if data[:1] == b"{":  # the usual case: one object, no leading whitespace
            try:  # _receive_one(data, events), inlined
                env = wire.ENVELOPE_DECODER.decode(data)
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                if size <= limit or not self._too_deep(data, limit, events):
                    self._receive_one(data, events)  # the error answers are made there
            else:
                self._receive_envelope(env, events)
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

    def _receive_one(self, data: bytes | msgspec.Raw, events: list[Event]) -> None:
        try:
            env = wire.ENVELOPE_DECODER.decode(data)
        except msgspec.ValidationError as exc:
            self._reply_error(events, None, INVALID_REQUEST, f"Invalid Request: {exc}")
            return
        except (msgspec.DecodeError, RecursionError) as exc:
            # A bad escape or byte deep inside still leaves the id readable (depth.py).
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
                message = f"Invalid result for {method}: {_validation_message(exc, 'result')}"
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
