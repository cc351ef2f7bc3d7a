"""The scopes a request body needs: those declared (``scopes=``) by the tool, prompt or
resource each of its JSON-RPC requests names. Read only when something declares scopes."""

from __future__ import annotations

from typing import Any

import msgspec

from ...server.app import Server

__all__ = ["required_scopes"]

_TARGET_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class _Message(msgspec.Struct, gc=False):
    method: Any = None
    params: msgspec.Raw = msgspec.Raw(b"null")


class _Target(msgspec.Struct, gc=False):
    name: Any = None
    uri: Any = None


_BODY = msgspec.json.Decoder(_Message | list[_Message])
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
        if not isinstance(method, str) or method not in _TARGET_FIELD:
            continue
        try:
            target = getattr(_TARGET.decode(message.params), _TARGET_FIELD[method])
        except msgspec.DecodeError:
            continue
        if isinstance(target, str):
            needed |= _declared(server, method, target)
    return needed


def _declared(server: Server, method: str, target: str) -> frozenset[str]:
    found = server.scopes.get(f"{method} {target}")
    if found is not None or method != "resources/read" or target in server.resources:
        return found or frozenset()
    for uri_template, entry in server.templates.items():  # the first match serves the read
        if entry.matcher.match(target) is not None:
            return server.scopes.get(f"{method} {uri_template}", frozenset())
    return frozenset()
