"""Issue 28 (F17's class, a number in a header read loosely): ``str.isdigit`` holds for
characters ``int()`` refuses (the superscript ``\\xb2`` a latin-1 header can carry), so a
``Content-Length`` check built on it raised instead of answering 400. uvicorn's parsers
refuse such a header before the app; the app does not rely on them."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind.http.server._asgi import Headers, receive_body

pytestmark = pytest.mark.anyio


async def test_content_length_with_non_ascii_digits_is_a_400() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    for declared in (b"\xb2", b"1\xb9", b"\xb2\xb3"):
        sent.clear()
        body = await receive_body(send, receive, Headers([(b"content-length", declared)]), 100, 5)
        assert body is None
        assert sent[0]["status"] == 400, declared
        error = msgspec.json.decode(sent[1]["body"])["error"]
        assert error["message"] == "Bad Request: invalid Content-Length"
