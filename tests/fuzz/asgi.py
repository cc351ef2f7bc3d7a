"""In-process HTTP for the fuzz targets: one request through an ASGI app, and the text format
the HTTP-level targets read their input in.

Input format (``parse``): optional head, then the body. When the input holds a blank line
(``\\n\\n``) the part before it is the head: an optional request line (``POST /mcp?x=1``),
then ``name: value`` lines (lines without a colon are ignored); otherwise the whole input is
the body (so JSON seeds of the older targets replay here too).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

__all__ = ["Reply", "Request", "call", "parse"]

_METHODS = frozenset({"GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH"})
_MAX_HEAD = 8192


@dataclasses.dataclass
class Request:
    method: str
    path: str
    query: bytes
    headers: list[tuple[str, str]]  # in order, names lower-case, repeats kept
    body: bytes

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]


@dataclasses.dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


def parse(data: bytes, method: str = "POST", path: str = "/") -> tuple[Request, bool]:
    """The request ``data`` describes, and whether it named its own headers."""
    head, sep, body = data.partition(b"\n\n")
    if not sep or len(head) > _MAX_HEAD:
        return Request(method, path, b"", [], data), False
    text = head.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    query = b""
    first = lines[0].split(" ")
    if len(first) == 2 and first[0] in _METHODS and first[1].startswith("/"):
        method = first[0]
        target, _, q = first[1].partition("?")
        # An ASGI server hands the path over decoded: no lone surrogates in it.
        path = target.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        query = q.encode("utf-8", "surrogateescape")
        lines = lines[1:]
    headers: list[tuple[str, str]] = []
    for line in lines:
        name, colon, value = line.partition(":")
        if colon and name.strip():
            headers.append((name.strip().lower(), value.strip()))
    return Request(method, path, query, headers, body), True


def encode_headers(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [
        (k.encode("utf-8", "surrogateescape"), v.encode("utf-8", "surrogateescape"))
        for k, v in headers
    ]


async def call(app: Any, request: Request, *, stream_chunks: int = 1) -> Reply:
    """Run one request through ``app``. The client stays connected until the response ends,
    or (an SSE stream) until ``stream_chunks`` body chunks arrived; then it disconnects."""
    sent: list[dict[str, Any]] = []
    finished = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": request.body, "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body":
            chunks = sum(1 for m in sent if m["type"] == "http.response.body")
            if not message.get("more_body", False) or chunks >= stream_chunks:
                finished.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": "http",
        "path": request.path,
        "raw_path": request.path.encode("utf-8", "surrogateescape"),
        "query_string": request.query,
        "root_path": "",
        "headers": encode_headers(request.headers),
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
    try:
        await app(scope, receive, send)
    finally:
        finished.set()
    if not sent or sent[0]["type"] != "http.response.start":
        raise AssertionError(f"{request.method} {request.path}: no response started")
    start = sent[0]
    out = b"".join(m.get("body", b"") for m in sent[1:])
    got = {k.decode("latin-1"): v.decode("latin-1") for k, v in start["headers"]}
    return Reply(start["status"], got, out)
