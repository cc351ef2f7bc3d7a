"""Transport wrappers for the fault tests: see what actually crossed the wire."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from mcpbind.transports import Transport


class Tap:
    """Wraps a transport; keeps every message it sent, and counts what crossed it.

    ``sent`` holds the raw bytes sent, in order (unless ``keep`` is false, for long runs).
    ``responses_in``/``responses_out`` count responses (result or error) per id received/sent,
    ``cancels_out`` the ``notifications/cancelled`` sent per request id, ``requests_out`` the
    requests sent per id.
    """

    def __init__(self, inner: Transport, *, keep: bool = True) -> None:
        self.inner = inner
        self.keep = keep
        self.sent: list[bytes] = []
        self.responses_in: Counter[Any] = Counter()
        self.responses_out: Counter[Any] = Counter()
        self.requests_out: Counter[Any] = Counter()
        self.cancels_out: Counter[Any] = Counter()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)
        if self.keep:
            self.sent.append(message)
        decoded = json.loads(message)
        if "result" in decoded or "error" in decoded:
            self.responses_out[decoded.get("id")] += 1
        elif decoded.get("method") == "notifications/cancelled":
            self.cancels_out[decoded["params"]["requestId"]] += 1
        elif "id" in decoded:
            self.requests_out[decoded["id"]] += 1

    async def receive(self) -> bytes:
        message = await self.inner.receive()
        decoded = json.loads(message)
        if "result" in decoded or "error" in decoded:
            self.responses_in[decoded.get("id")] += 1
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()

    def wire(self) -> bytes:
        return b"\n".join(self.sent)

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(m) for m in self.sent]
