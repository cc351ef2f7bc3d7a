"""The JSON-RPC envelope: decoded once per message, params/result kept as zero-copy ``Raw``."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .errors import McpError

__all__ = [
    "BATCH_DECODER",
    "ENVELOPE_DECODER",
    "Envelope",
    "WireError",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
]


class WireError(msgspec.Struct, kw_only=True, gc=False, omit_defaults=True):
    """A JSON-RPC error object."""

    code: int
    message: str
    data: Any | UnsetType = UNSET


class Envelope(msgspec.Struct, kw_only=True, gc=False):
    """Every JSON-RPC message shape at once; the core classifies it by which keys are set.

    ``id`` is ``int | str``: msgspec rejects bools and floats, and keeps ``1`` and ``"1"``
    apart. ``None`` is kept only to answer an error response whose id is null.
    """

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: WireError | UnsetType = UNSET


ENVELOPE_DECODER: msgspec.json.Decoder[Envelope] = msgspec.json.Decoder(Envelope)
BATCH_DECODER: msgspec.json.Decoder[list[msgspec.Raw]] = msgspec.json.Decoder(list[msgspec.Raw])


class _Request(msgspec.Struct, gc=False, omit_defaults=True):
    jsonrpc: str
    id: int | str
    method: str
    params: Any = UNSET


class _Notification(msgspec.Struct, gc=False, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _Result(msgspec.Struct, gc=False):
    jsonrpc: str
    id: int | str
    result: Any


class _Error(msgspec.Struct, gc=False):
    jsonrpc: str
    id: int | str | None
    error: WireError


_ENCODER = msgspec.json.Encoder()


def encode_request(id: int | str, method: str, params: Any) -> bytes:
    return _ENCODER.encode(_Request("2.0", id, method, UNSET if params is None else params))


def encode_notification(method: str, params: Any) -> bytes:
    return _ENCODER.encode(_Notification("2.0", method, UNSET if params is None else params))


def encode_result(id: int | str, result: Any) -> bytes:
    return _ENCODER.encode(_Result("2.0", id, {} if result is None else result))


def encode_error(id: int | str | None, error: McpError) -> bytes:
    data = UNSET if error.data is None else error.data
    return _ENCODER.encode(
        _Error("2.0", id, WireError(code=error.code, message=error.message, data=data))
    )


class Decoded(bytes):
    """A message's bytes with the envelope the classifier decoded them into: handed to a
    session's core, which reads the envelope instead of decoding the bytes again."""

    envelope: Envelope
