"""The sans-I/O protocol core: bytes in, events out; calls in, bytes out. No I/O, no anyio.

One :class:`Session` per connection. The async layer feeds every inbound message to
:meth:`Session.receive` and writes whatever bytes the core hands back (``Outgoing`` events and
the return values of the ``send_*``/``cancel``/``expire`` calls).
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo

from . import wire
from ._base import (
    SessionOptions,
    _field,
    _Pending,
    _with_progress_token,
    has_capability,
    logger,
)
from .errors import (
    CONNECTION_CLOSED,
    LocalProtocolError,
    McpError,
)
from .events import (
    ErrorReceived,
    RequestId,
)
from .meta import _is_id
from .receive import Receiver
from .state import State, Transition
from .subcaps import SUBCAPABILITY_METHODS, subcapability_refusal

__all__ = ["Session", "SessionOptions", "has_capability"]


class Session(Receiver):
    """The protocol state of one connection, for one ``role``.

    ``version`` is the negotiated protocol version. ``None`` means "not negotiated yet": the
    ``initialize`` handshake then runs through the lifecycle states, and the core records the
    version and both sides' capabilities from it. Passing a version skips the handshake.
    """

    # -- negotiation and the send checks, for the client's negotiation and pipeline --------

    def restart_negotiation(self) -> None:
        """A client session created in a stateless version whose ``server/discover`` probe
        found a legacy server: back to AWAITING_INIT through the transition table, the version
        forgotten, so that the ``initialize`` handshake runs next on the same connection
        (transports/stdio.mdx, Backward Compatibility). A closed session stays closed (its
        next request says so); anything else the table has no step for is refused."""
        if self.role != "client":
            raise LocalProtocolError("only a client renegotiates")
        before = self.state
        self._transition(Transition.RENEGOTIATE)
        if self.state is not before:
            self.version = None
        elif before is not State.CLOSED:
            raise LocalProtocolError(f"cannot renegotiate in state {before.value}")

    def check_send_capability(self, info: MethodInfo[Any, Any]) -> None:
        """Raise :class:`LocalProtocolError` when sending ``info`` needs a capability its
        owner (we, or the peer) did not declare; nothing when ``enforce_capabilities`` is off.
        The check :meth:`send_request` makes, for a request the caller answers itself (the
        2026-07-28 client's ``logging/setLevel``, which becomes a per-request level)."""
        self._check_send_capability(info)

    def outbound_method(self, method: str) -> MethodInfo[Any, Any] | None:
        """The table row our ``method`` requests and notifications go out under (generated,
        or added by :meth:`register_method`), in any protocol version; ``None`` when the
        method is unknown."""
        return self._outbound.get(method)

    # -- outgoing ------------------------------------------------------------------------

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
            self._check_send_capability(row)
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
            if not _is_id(progress_token):
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
        self._check_send_capability(info)
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
        if _is_id(request_id):
            self._inbound.pop(request_id, None)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Give up on one of our requests: forget it and return ``notifications/cancelled``.

        ``None`` for an unknown/finished id, and for ``initialize`` (which MUST NOT be
        cancelled, basic/utilities/cancellation.mdx); its pending entry is still dropped.
        """
        pending = self._pending.pop(request_id, None) if _is_id(request_id) else None
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
