"""The HTTP client of the OAuth mechanics: every URL checked (:mod:`.urls`), no redirects
followed, bounded bodies and timeouts, JSON objects only.

It is a separate ``httpx2.AsyncClient`` from the MCP transport's: metadata, registration
and token requests never carry the MCP server's ``Authorization`` header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2
import msgspec

from .errors import AuthError, redact
from .urls import resolve_checked

__all__ = ["Fetcher", "HttpReply"]

MAX_BODY = 256 * 1024


@dataclass
class HttpReply:
    """A response: status, headers and the JSON object of its body (``{}`` if none)."""

    status: int
    headers: httpx2.Headers
    json: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def error_text(self) -> str:
        """``error: description`` from an OAuth error body, redacted, or the status."""
        error = self.json.get("error")
        if isinstance(error, str):
            desc = self.json.get("error_description")
            text = f"{error}: {desc}" if isinstance(desc, str) and desc else error
            return redact(text, 200)
        return f"HTTP {self.status}"


class Fetcher:
    """GET and POST for OAuth: ``local_ok`` is true when the MCP server is on loopback."""

    def __init__(
        self,
        *,
        local_ok: bool,
        timeout: float = 10.0,
        client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.local_ok = local_ok
        self._client = client or httpx2.AsyncClient(
            follow_redirects=False, timeout=httpx2.Timeout(timeout)
        )
        self._own = client is None

    async def aclose(self) -> None:
        if self._own:
            await self._client.aclose()

    async def get(self, url: str, headers: Mapping[str, str] | None = None) -> HttpReply:
        return await self._send("GET", url, headers=headers)

    async def post(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> HttpReply:
        return await self._send("POST", url, form=form, json_body=json, headers=headers)

    async def _send(
        self,
        method: str,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> HttpReply:
        await resolve_checked(url, local_ok=self.local_ok)
        send_headers = {"accept": "application/json", **(headers or {})}
        content: bytes | None = None
        if json_body is not None:
            content = msgspec.json.encode(json_body)
            send_headers["content-type"] = "application/json"
        try:
            request = self._client.build_request(
                method,
                url,
                headers=send_headers,
                data=dict(form) if form else None,
                content=content,
            )
            response = await self._client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise AuthError(f"{method} {url} failed: {type(exc).__name__}: {exc}") from None
        try:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY:
                    raise AuthError(f"{method} {url}: response larger than {MAX_BODY} bytes")
        except httpx2.HTTPError as exc:
            raise AuthError(f"{method} {url}: reading the response failed: {exc}") from None
        finally:
            await response.aclose()
        value: Any = {}
        if body:
            try:
                value = msgspec.json.decode(bytes(body))
            except msgspec.DecodeError:
                value = {}
        return HttpReply(
            response.status_code, response.headers, value if isinstance(value, dict) else {}
        )
