"""Small pure-ASGI helpers: header access, plain responses, a capped body read."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any

import msgspec

from ...protocol.errors import INVALID_REQUEST
from ...server.lifespan import LifespanClaim, LifespanError
from .ticks import ticks

__all__ = [
    "OWS",
    "client_address",
    "Receive",
    "Scope",
    "Send",
    "BodyError",
    "Headers",
    "RequestHeaders",
    "accepts",
    "media_type",
    "read_body",
    "receive_body",
    "send_error",
    "send_response",
    "serve_lifespan",
    "take_lifespan",
]

_logger = logging.getLogger("mcpbind.http")

OWS = " \t"
"""A header value's surrounding whitespace (RFC 9110 §5.5), to trim with ``strip(OWS)``:
not ``str.strip``'s, which also takes a no-break space, U+0085 and U+2028, characters a
proxy keeps (so the two would read the value differently)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_WANTED = frozenset(
    {
        b"host",
        b"origin",
        b"content-type",
        b"content-length",
        b"accept",
        b"mcp-session-id",
        b"mcp-protocol-version",
        b"last-event-id",
    }
)


_NO_MCP: Mapping[str, str] = MappingProxyType({})  # a Headers without other mcp-* headers
_NONE: frozenset[str] = frozenset()


def client_address(scope: Scope) -> str | None:
    """The address a request comes from (what per-client caps count), if known."""
    client = scope.get("client")
    return str(client[0]) if client else None


class Headers:
    """The request headers the transport reads, decoded once (latin-1, as HTTP/1.1 has it).

    A header the transport reads that appears twice is recorded in ``duplicates``: two
    ``Host`` or two ``Mcp-Session-Id`` values are refused rather than guessed between. The
    other ``mcp-*`` headers (the 2026-07-28 request metadata headers) are kept in the same
    pass (``mcp``, ``mcp_repeated``): the session id and protocol version are :meth:`get`'s,
    and refused when repeated.
    """

    __slots__ = ("duplicates", "get", "mcp", "mcp_repeated", "raw")

    get: Callable[[bytes], str | None]
    """The decoded value of a header the transport reads (its name in lower case), if given:
    the values' own ``dict.get`` (a C call, no Python frame: several per request)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[bytes, str] = {}
        mcp: dict[str, str] | None = None
        repeated: set[str] | None = None
        duplicates = False
        for name, value in raw:
            if not name.islower():  # ASGI servers lower-case them already: no copy then
                name = name.lower()
            if name in _WANTED:
                if name in values:
                    if name == b"accept":  # lists may legally be split over lines
                        values[name] += "," + value.decode("latin-1")
                        continue
                    duplicates = True
                values[name] = value.decode("latin-1")
            elif name[:4] == b"mcp-":
                key = name.decode("latin-1")
                if mcp is None:
                    mcp = {}
                elif key in mcp:
                    repeated = repeated or set()
                    repeated.add(key)
                mcp[key] = value.decode("latin-1")
        self.get = values.get
        #: The headers as the ASGI scope has them (``RequestHeaders`` decodes them for handlers).
        self.raw = raw
        #: The other ``mcp-*`` headers (the 2026-07-28 request metadata headers), and those of
        #: them given more than once: what ``check_header_values`` reads.
        self.mcp: Mapping[str, str] = _NO_MCP if mcp is None else mcp
        self.mcp_repeated: set[str] | frozenset[str] = _NONE if repeated is None else repeated
        self.duplicates = duplicates


#: Left out of what handlers read: the token is the auth layer's (``ctx.principal`` says who
#: is calling); a server must not pass it on (authorization.mdx §Access Token Privilege
#: Restriction, §Token Passthrough).
_CREDENTIALS = frozenset({"authorization", "proxy-authorization", "dpop"})


class RequestHeaders(Mapping[str, str]):
    """An HTTP request's headers as its handler reads them (``Context.headers``): read-only,
    names in lower case, values decoded as latin-1 with their surrounding whitespace trimmed;
    a field given more than once is one value joined with ``", "`` (RFC 9110 §5.3; ``Cookie``
    with ``"; "``, RFC 6265 §5.4). Credentials are left out (``_CREDENTIALS``). Decoded on
    first read: a handler that reads none costs one small object per request."""

    __slots__ = ("_fields", "_raw")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._fields: dict[str, str] | None = None

    def _decoded(self) -> dict[str, str]:
        fields = self._fields
        if fields is None:
            fields = {}
            for name, value in self._raw:
                key = name.decode("latin-1").lower()
                if key in _CREDENTIALS:
                    continue
                text = value.decode("latin-1").strip(OWS)
                if key in fields:
                    fields[key] += ("; " if key == "cookie" else ", ") + text
                else:
                    fields[key] = text
            self._fields = fields
            self._raw = []
        return fields

    def __getitem__(self, name: str) -> str:
        return self._decoded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:  # names only: values may be personal
        return f"RequestHeaders({sorted(self._decoded())!r})"


@functools.lru_cache(maxsize=256)  # clients send the same few Content-Type values
def media_type(value: str | None) -> str:
    return (value or "").partition(";")[0].strip().lower()


@functools.lru_cache(maxsize=256)  # clients send the same few Accept values
def accepts(accept: str | None, wanted: str) -> bool:
    """Whether an ``Accept`` header lists ``wanted`` (or a wildcard covering it)."""
    if not accept:
        return False
    major = wanted.partition("/")[0]
    for part in accept.split(","):
        kind, _, params = part.partition(";")
        if kind.strip().lower() in (wanted, f"{major}/*", "*/*") and not _refused(params):
            return True
    return False


def _refused(params: str) -> bool:
    """RFC 9110 §12.4.2: ``q=0`` means "not acceptable"."""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip()) <= 0
            except ValueError:
                return True
    return False


def _error_body(code: int, message: str) -> bytes:
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    )


async def send_response(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
    content_type: bytes | None = None,
) -> None:
    out = list(headers or ())
    if content_type is not None:
        out.append((b"content-type", content_type))
    out.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_error(
    send: Send,
    status: int,
    code: int,
    message: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An HTTP error whose body is a JSON-RPC error response without an id."""
    await send_response(send, status, _error_body(code, message), headers, b"application/json")


class BodyError(Exception):
    """The body could not be read within the limits: answer with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def read_body(receive: Receive, limit: int, timeout: float | None) -> bytes:
    """Read the whole request body, refusing it as soon as it passes ``limit`` bytes (413)
    and when it takes longer than ``timeout`` seconds in total (408).

    The deadline covers the first ``receive()`` too: a client that sends complete headers
    and then no body byte at all would otherwise hold the connection (and this task)
    forever, since ASGI servers only wait for body bytes, they do not time them out."""
    chunks: list[bytes] = []
    size = 0
    deadline = clock = None
    if timeout is not None:  # on the shared clock: a timer per request costs more (ticks.py)
        loop = asyncio.get_running_loop()  # once: each lookup is a getpid() on 3.11
        deadline = _Deadline(loop)
        clock = ticks(loop)
        clock.arm(deadline, timeout, deadline.expire)
    try:
        while True:
            message = await receive()
            chunk: bytes = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:  # counted per chunk: 1-byte pieces cannot slip past
                    raise BodyError(413, f"Request body exceeds {limit} bytes")
                chunks.append(chunk)
            elif message["type"] == "http.disconnect":
                raise BodyError(400, "Client disconnected")
            if not message.get("more_body"):
                break
    except asyncio.CancelledError:
        if deadline is None or not deadline.expired:
            raise
        deadline.task.uncancel()  # ours: the deadline passed while the body was awaited
        raise BodyError(408, "Request body not received in time") from None
    finally:
        if clock is not None:
            clock.disarm(deadline)
    return b"".join(chunks)


class _Deadline:
    """The deadline of one body read: cancels the reading task when it passes. It is armed
    only while the task waits in ``read_body``, so the cancellation always lands there."""

    __slots__ = ("expired", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        task = asyncio.current_task(loop)
        assert task is not None
        self.task = task
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        self.task.cancel()


async def receive_body(
    send: Send, receive: Receive, headers: Headers, limit: int, timeout: float | None
) -> bytes | None:
    """The request body within ``limit`` bytes and ``timeout`` seconds, or ``None`` after
    answering 400 (malformed ``Content-Length``), 413 (too large, declared or as it streams)
    or 408 (too slow); the error body is a JSON-RPC error (code -32600)."""
    declared = headers.get(b"content-length")
    if declared is not None:
        if not (declared.isascii() and declared.strip().isdigit()):  # int() reads "\xb2" not
            await send_error(send, 400, INVALID_REQUEST, "Bad Request: invalid Content-Length")
            return None
        if int(declared) > limit:
            await send_error(send, 413, INVALID_REQUEST, f"Request body exceeds {limit} bytes")
            return None
    try:
        return await read_body(receive, limit, timeout)
    except BodyError as exc:
        await send_error(send, exc.status, INVALID_REQUEST, exc.message)
        return None


async def serve_lifespan(
    receive: Receive,
    send: Send,
    aclose: Callable[[], Awaitable[None]],
    start: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """The ASGI lifespan protocol for an app that ``start``s (the server's lifespan) at
    startup and whose cleanup is ``aclose`` (at shutdown). A start that fails is reported as
    ``lifespan.startup.failed`` with its one-line message (the ASGI server then exits)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if start is not None:
                try:
                    await start()
                except LifespanError as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def take_lifespan(claim: LifespanClaim, send: Send) -> bool:
    """Start the server's lifespan for a request of an app no lifespan event reached (mounted
    in a framework that does not pass them on); ``False`` after answering 503 if it fails
    (the reason is logged, not sent: exception text can hold paths or secrets)."""
    try:
        await claim.take()
    except LifespanError as exc:
        _logger.error("%s", exc)
        message = "Service Unavailable: the server failed to start"
        await send_error(send, 503, INVALID_REQUEST, message, [(b"retry-after", b"5")])
        return False
    return True
