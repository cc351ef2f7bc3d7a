"""uvicorn HTTP/1.1 protocols with a deadline on each request's headers (slowloris).

uvicorn bounds an idle keep-alive connection, but any received byte resets that timer, so a
client trickling its request headers one byte at a time holds a connection forever. These
subclasses of uvicorn's h11 and httptools protocols give the whole header block one deadline,
started when the connection opens and again when a response completes (the next request on a
kept-alive connection); new bytes do not extend it. When it passes the connection is closed
without an answer. The httptools one is the fast path (C parser, 250-300 us less per request).

The httptools one also caps the size of a request's header block (``max_header_size``):
llhttp buffers an unfinished header without bound (40 connections each sending 16 MiB of one
header took a server from 33 MB to 740 MB). Past the cap the connection gets a 431 (or, with
a response of the connection's previous request still being written, is just closed). h11
has that cap built in (``h11_max_incomplete_event_size``, which ``serve_http`` sets to the
same value; 400 and close past it).

These are uvicorn internals: pyproject.toml bounds uvicorn above, and
tests/http/server/test_uvicorn_internals.py fails when what is used here moves.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

__all__ = ["MAX_HEADER_SIZE", "PROTOCOLS", "header_deadline_protocol"]

#: The HTTP/1.1 parsers a deadline protocol exists for.
PROTOCOLS = ("h11", "httptools")

MAX_HEADER_SIZE = 64 * 1024
"""Bytes of one request's line and headers (``serve_http(max_header_size=)``)."""

_TOO_LARGE = b"Request header fields too large"
_431 = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8"
    b"\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TOO_LARGE), _TOO_LARGE)
)


class _HeaderDeadline:
    """The deadline shared by both protocols; the subclasses say when headers are awaited.

    Per request it only sets a number: the timer is created when none is pending and, when
    it fires early (headers completed, a new request awaited since), it is moved to the
    current deadline. So a busy connection costs one timer per ``header_timeout``, not two
    timer operations per request.
    """

    header_timeout: float = 10.0
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    _header_timer: asyncio.TimerHandle | None = None
    _headers_due: float | None = None  # loop time the awaited headers are due by

    def _await_headers(self) -> None:
        self._headers_due = due = self.loop.time() + self.header_timeout
        if self._header_timer is None:
            self._header_timer = self.loop.call_at(due, self._header_deadline_check)

    def _headers_received(self) -> None:
        self._headers_due = None

    def _stop_header_deadline(self) -> None:
        self._headers_due = None
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_deadline_check(self) -> None:
        self._header_timer = None
        due = self._headers_due
        if due is None:  # no request is being awaited: re-armed by the next one
            return
        if self.loop.time() < due:  # armed for an earlier request: move to this one's deadline
            self._header_timer = self.loop.call_at(due, self._header_deadline_check)
        elif not self.transport.is_closing():
            self.transport.close()


@functools.cache
def _h11_class() -> type[Any]:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineH11Protocol(_HeaderDeadline, H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_deadline()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a new request's headers are complete
                self._headers_received()

        def on_response_complete(self) -> None:
            before = self.cycle
            super().on_response_complete()  # may start a pipelined request (a new cycle)
            if self.cycle is before and not self.transport.is_closing():
                self._await_headers()

    return HeaderDeadlineH11Protocol


@functools.cache
def _httptools_class() -> type[Any]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HeaderDeadlineHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_deadline()
            super().connection_lost(exc)

        max_header_size: int = MAX_HEADER_SIZE
        _header_bytes = 0  # received since the current request began, headers unfinished
        _in_headers = False

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_headers and not self.transport.is_closing():
                # Counted after parsing: a chunk that completes the headers is not counted,
                # so a body arriving with its headers never counts against the cap.
                self._header_bytes += len(data)
                if self._header_bytes > self.max_header_size:
                    cycle = self.cycle
                    if cycle is None or cycle.response_complete:  # nothing else being written
                        self.transport.write(_431)
                    self.transport.close()

        def on_message_begin(self) -> None:
            self._in_headers = True
            self._header_bytes = 0
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_headers = False
            self._headers_received()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            # A queued (pipelined) request already has its headers: it starts now, unbounded.
            queued = bool(self.pipeline)
            super().on_response_complete()
            if not queued and not self.transport.is_closing():
                self._await_headers()

    return HeaderDeadlineHttpToolsProtocol


def header_deadline_protocol(
    header_timeout: float, http: str = "h11", max_header_size: int = MAX_HEADER_SIZE
) -> type[asyncio.Protocol]:
    """uvicorn's ``http`` protocol class (``"h11"`` or ``"httptools"``) closing a connection
    whose request headers take longer than ``header_timeout`` seconds; the httptools one also
    answers 431 to headers over ``max_header_size`` bytes (for h11, give uvicorn
    ``h11_max_incomplete_event_size``)."""
    if http == "h11":
        base = _h11_class()
    elif http == "httptools":
        base = _httptools_class()
    else:
        raise ValueError(f"http must be one of {PROTOCOLS}, not {http!r}")
    if not header_timeout > 0:
        raise ValueError(f"header_timeout must be > 0, not {header_timeout!r}")
    if max_header_size < 1:
        raise ValueError(f"max_header_size must be positive, not {max_header_size!r}")
    settings = {"header_timeout": header_timeout, "max_header_size": max_header_size}
    cls: type[asyncio.Protocol] = type(base.__name__, (base,), settings)
    return cls
