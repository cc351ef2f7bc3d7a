"""The scopes a request body needs: those declared (``scopes=``) by the tool, prompt or
resource each of its JSON-RPC requests names -- to call or get it, to read, subscribe to or
listen for a resource, or to complete an argument of it. Read only when something declares
scopes."""

from __future__ import annotations

from typing import Any

import msgspec

from ...server.app import Server

__all__ = ["required_scopes"]

_TARGET_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: Methods naming a resource (or a prompt) by another field, checked as reading (getting) it.
_OTHER_TARGETS = frozenset({"resources/subscribe", "completion/complete", "subscriptions/listen"})


class _ScopeMessage(msgspec.Struct, gc=False):
    method: Any = None
    params: msgspec.Raw = msgspec.Raw(b"null")


class _Target(msgspec.Struct, gc=False):
    name: Any = None
    uri: Any = None
    ref: Any = None  # completion/complete: {"type": "ref/prompt", "name"} or ref/resource "uri"
    notifications: Any = None  # subscriptions/listen: {"resourceSubscriptions": [uri, ...]}


_BODY = msgspec.json.Decoder(_ScopeMessage | list[_ScopeMessage])
_TARGET = msgspec.json.Decoder(_Target)


def required_scopes(server: Server, body: bytes) -> frozenset[str]:
    """The union of the scopes declared for what ``body`` (one message or a batch) calls.
    A body that is not JSON-RPC needs none here: the transport answers it."""
    try:
        decoded = _BODY.decode(body)
    except msgspec.DecodeError:
        return frozenset()
    needed: frozenset[str] = frozenset()
    for message in decoded if isinstance(decoded, list) else (decoded,):
        method = message.method
        if not isinstance(method, str) or (
            method not in _TARGET_FIELD and method not in _OTHER_TARGETS
        ):
            continue
        try:
            params = _TARGET.decode(message.params)
        except msgspec.DecodeError:
            continue
        for target_method, target in _targets(method, params):
            if isinstance(target, str):
                needed |= server.declared_scopes(target_method, target)
    return needed


def _targets(method: str, params: _Target) -> list[tuple[str, Any]]:
    """``(method, name or URI)`` of what the request names, as the method declaring scopes."""
    if method in _TARGET_FIELD:
        return [(method, getattr(params, _TARGET_FIELD[method]))]
    if method == "resources/subscribe":
        return [("resources/read", params.uri)]
    if method == "completion/complete":
        ref = params.ref if isinstance(params.ref, dict) else {}
        if ref.get("type") == "ref/prompt":
            return [("prompts/get", ref.get("name"))]
        return [("resources/read", ref.get("uri"))]
    wanted = params.notifications if isinstance(params.notifications, dict) else {}
    uris = wanted.get("resourceSubscriptions")
    return [("resources/read", uri) for uri in uris] if isinstance(uris, list) else []
