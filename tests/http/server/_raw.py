"""Raw HTTP/1.1 over a socket (exact Host bytes, partial requests) and in-process ASGI calls."""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

from mcpbind.http import StreamableHTTPApp


def raw_request(
    port: int, head: bytes, body: bytes = b"", timeout: float = 5.0
) -> tuple[int, bytes]:
    """Send ``head`` (request line + headers, without the blank line) and ``body``; return the
    status and everything the server sent until it closed or the response was complete."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head + b"\r\nconnection: close\r\n\r\n" + body)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    status = int(data.split(b" ", 2)[1]) if data else 0
    return status, data


def post_head(
    port: int,
    host: str | None = None,
    origin: str | None = None,
    length: int | None = None,
    **extra: str,
) -> bytes:
    lines = [b"POST /mcp HTTP/1.1"]
    lines.append(b"host: " + (host if host is not None else f"127.0.0.1:{port}").encode())
    if origin is not None:
        lines.append(b"origin: " + origin.encode())
    lines.append(b"content-type: application/json")
    lines.append(b"accept: application/json, text/event-stream")
    if length is not None:
        lines.append(b"content-length: %d" % length)
    for k, v in extra.items():
        lines.append(f"{k.replace('_', '-')}: {v}".encode())
    return b"\r\n".join(lines)


async def asgi_messages(
    app: Any,
    method: str = "POST",
    headers: Iterable[tuple[str, str]] = (),
    chunks: Iterable[bytes] = (b"",),
    server: tuple[str, int] = ("127.0.0.1", 8000),
    client: tuple[str, int] | None = None,
) -> list[dict[str, Any]]:
    """One in-process ASGI HTTP request; the body is delivered as ``chunks``. The ASGI
    messages the app sent, in order."""
    it = iter(chunks)
    pending = next(it, b"")
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pending
        chunk = pending
        nxt = next(it, None)
        pending = nxt if nxt is not None else b""
        return {"type": "http.request", "body": chunk, "more_body": nxt is not None}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "server": server,
    }
    if client is not None:
        scope["client"] = client
    await app(scope, receive, send)
    return sent


async def asgi_call(app: Any, *args: Any, **kwargs: Any) -> tuple[int, dict[str, str], bytes]:
    """One in-process ASGI HTTP request (:func:`asgi_messages`'s arguments): status, headers
    and body."""
    sent = await asgi_messages(app, *args, **kwargs)
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def session_count(app: StreamableHTTPApp) -> int:
    return len(app.sessions)
