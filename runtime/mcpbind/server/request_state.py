"""``requestState`` for multi round-trip requests: opaque to the client, protected by the server.

basic/patterns/mrtr.mdx, Server Requirements: the state is attacker-controlled input, so it is
signed (HMAC-SHA256 with the server's key) and carries what the server checks on receipt: an
expiry, the originating request (method, target and a digest of its arguments), the audience
(the server it was minted for: replicas of one server share it, another server sharing a key
does not) and optionally the authenticated principal. Wire form: ``base64url(payload) "."
base64url(tag)``. Keys form a ring: the current key seals, previous keys still open (rotation).
The payload is signed, not encrypted: it holds the client's own answers and the handler's
own state, which the client may read; never put a secret in a handler's state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from .._lazy import LazyModule, lazy_logger
from ..protocol import INVALID_PARAMS, McpError

if TYPE_CHECKING:
    import base64
    import binascii
    import hashlib
    import hmac
else:  # imported at first use, not with mcpbind (issue 15, cold start)
    base64 = LazyModule("base64", globals())
    binascii = LazyModule("binascii", globals())
    hashlib = LazyModule("hashlib", globals())
    hmac = LazyModule("hmac", globals())

__all__ = [
    "InvalidRequestState",
    "RequestBinding",
    "RoundState",
    "StateCodec",
    "binding_for",
    "check_key",
    "field_of",
]

_LABEL: Final = b"mcpbind/request-state/v1\x00"
logger = lazy_logger("mcpbind.server")


class InvalidRequestState(McpError):
    """-32602: the echoed ``requestState`` failed verification (tampered, expired, replayed)."""

    def __init__(self, reason: str) -> None:
        # The reason goes to the server log only: the client learns nothing about the check.
        logger.warning("requestState rejected: %s", reason)
        super().__init__(
            INVALID_PARAMS, "Invalid or expired requestState", {"reason": "invalid_request_state"}
        )
        self.reason = reason


class RequestBinding(msgspec.Struct, frozen=True, array_like=True):
    """What a state is bound to: the method, its target (tool/prompt name or URI), a digest
    of the salient arguments, and a digest of the principal (empty without one)."""

    method: str
    target: str
    digest: str
    principal: str = ""


class RoundState(msgspec.Struct, array_like=True):
    """The signed payload: binding, expiry (ms since the epoch), rounds so far, the keys asked
    in the last round, every input response the handler consumed so far, and the handler's
    own state if it built its ``InputRequiredResult`` itself."""

    binding: RequestBinding
    expires: int
    rounds: int
    asked: list[str]
    responses: dict[str, msgspec.Raw]
    app: str | None = None
    """A handler's own ``requestState`` (explicit MRTR), handed back to it in plaintext."""
    audience: str = ""
    """The server the state was minted for (set by :meth:`StateCodec.seal`)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text or any(c not in _ALPHABET for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_ALPHABET: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(RoundState)


def field_of(params: Any, attr: str, key: str) -> Any:
    """A params field from a Struct or (custom handlers) a dict; ``None`` when absent."""
    value = params.get(key) if isinstance(params, dict) else getattr(params, attr, None)
    return None if value is msgspec.UNSET else value


def binding_for(method: str, params: Any, principal: str | None = None) -> RequestBinding:
    """The binding of a ``tools/call``, ``prompts/get`` or ``resources/read`` request."""
    if method == "resources/read":
        target, args = str(field_of(params, "uri", "uri") or ""), None
    else:
        target = str(field_of(params, "name", "name") or "")
        args = field_of(params, "arguments", "arguments")
    value = msgspec.json.decode(msgspec.json.encode(args)) if args is not None else {}
    canonical = msgspec.json.encode(value, order="sorted")
    digest = _b64(hashlib.sha256(canonical).digest()[:18])
    who = "" if principal is None else _b64(hashlib.sha256(principal.encode()).digest()[:18])
    return RequestBinding(method, target, digest, who)


class StateCodec:
    """Seals :class:`RoundState` with the current HMAC key and opens it with any key of the
    ring (``secret`` first, then ``previous``), for ``audience`` only."""

    def __init__(
        self, secret: bytes, ttl: float, *, previous: Sequence[bytes] = (), audience: str = ""
    ) -> None:
        for key in (secret, *previous):
            check_key(key)
        self._keys = (secret, *previous)
        self._ttl_ms = int(ttl * 1000)
        self._audience = audience

    def _tag(self, key: bytes, payload: bytes) -> bytes:
        return hmac.new(key, _LABEL + payload, hashlib.sha256).digest()

    def seal(self, state: RoundState) -> str:
        state.expires = int(time.time() * 1000) + self._ttl_ms
        state.audience = self._audience
        payload = _ENCODER.encode(state)
        return f"{_b64(payload)}.{_b64(self._tag(self._keys[0], payload))}"

    def open(self, token: str, binding: RequestBinding) -> RoundState:
        """Verify and decode; any failure raises :class:`InvalidRequestState`."""
        body, dot, tag = token.partition(".")
        if not dot:
            raise InvalidRequestState("malformed")
        try:
            payload, mac = _unb64(body), _unb64(tag)
        except (ValueError, binascii.Error):
            raise InvalidRequestState("malformed") from None
        if not any(hmac.compare_digest(mac, self._tag(key, payload)) for key in self._keys):
            raise InvalidRequestState("signature")
        try:
            state = _DECODER.decode(payload)
        except msgspec.DecodeError:
            raise InvalidRequestState("payload") from None
        if state.expires < int(time.time() * 1000):
            raise InvalidRequestState("expired")
        if state.audience != self._audience:
            raise InvalidRequestState(f"minted for another server ({state.audience!r})")
        if state.binding != binding:
            raise InvalidRequestState("bound to another request")
        return state


def check_key(key: bytes) -> None:
    """Refuse a ``requestState`` key too short to protect anything."""
    if len(key) < 16:
        raise ValueError("the requestState key must be at least 16 bytes")
