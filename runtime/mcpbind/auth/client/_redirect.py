"""Redirect handlers: how the user's authorization reaches the client.

A redirect handler is a callable that receives the authorization URL and returns the URL
the authorization server redirected to (the ``redirect_uri`` with ``code``, ``state``,
``iss``). It may be sync or async, and says its ``redirect_uri`` as an attribute.

* :class:`LoopbackRedirect`: for people (CLI, Host). Opens the browser and waits for the
  redirect on ``http://127.0.0.1:PORT/callback`` (RFC 8252 §7.3 loopback redirect).
* :class:`HeadlessRedirect`: for tests and unattended runs against an authorization server
  that redirects without a login page: it GETs the authorization URL and follows redirects
  until one points at the ``redirect_uri``.
"""

from __future__ import annotations

import inspect
import logging
import socket
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Protocol
from urllib.parse import urljoin

import anyio
import httpx2
from anyio.abc import SocketListener

from .errors import AuthError

__all__ = ["HeadlessRedirect", "LoopbackRedirect", "RedirectHandler", "call_redirect_handler"]

logger = logging.getLogger("mcpbind.auth")

RedirectHandler = Callable[[str], str | Awaitable[str]]


class _HasRedirectUri(Protocol):
    redirect_uri: str


async def call_redirect_handler(handler: RedirectHandler, authorization_url: str) -> str:
    result = handler(authorization_url)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, str):
        raise AuthError("the redirect handler returned no redirect URL")
    return result


class HeadlessRedirect:
    """Follow the authorization server's redirects (no browser) up to ``redirect_uri``."""

    def __init__(
        self, redirect_uri: str = "http://127.0.0.1/callback", *, max_hops: int = 10
    ) -> None:
        self.redirect_uri = redirect_uri
        self.max_hops = max_hops

    async def __call__(self, authorization_url: str) -> str:
        url = authorization_url
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10.0) as client:
            for _ in range(self.max_hops):
                response = await client.get(url)
                await response.aclose()
                location = response.headers.get("location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    raise AuthError(
                        f"the authorization server answered HTTP {response.status_code} "
                        "instead of redirecting"
                    )
                url = urljoin(url, location)
                if url.startswith(self.redirect_uri.split("?", 1)[0]):
                    return url
        raise AuthError("too many redirects before reaching the redirect URI")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


_PAGE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\nconnection: close\r\n\r\n"
    b"<!doctype html><title>mcpbind</title><p>Authorization finished. You can close this page."
)


class LoopbackRedirect:
    """Open the browser at the authorization URL; receive the redirect on 127.0.0.1."""

    def __init__(
        self,
        port: int = 0,
        *,
        path: str = "/callback",
        timeout: float = 300.0,
        open_browser: Callable[[str], object] | None = None,
    ) -> None:
        self.port = port or _free_port()
        self.path = path
        self.timeout = timeout
        self.redirect_uri = f"http://127.0.0.1:{self.port}{path}"
        self._open = open_browser or webbrowser.open

    async def __call__(self, authorization_url: str) -> str:
        listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        listener = listeners.listeners[0]  # one address: 127.0.0.1
        assert isinstance(listener, SocketListener)
        print(
            f"Opening the browser to authorize; if it does not open, visit:\n  {authorization_url}",
            file=sys.stderr,
        )
        await anyio.to_thread.run_sync(self._open, authorization_url)
        try:
            with anyio.fail_after(self.timeout):
                while True:
                    stream = await listener.accept()
                    async with stream:
                        head = b""
                        with anyio.move_on_after(10):
                            while b"\r\n" not in head and len(head) < 8192:
                                head += await stream.receive(8192)
                        parts = head.split(b"\r\n", 1)[0].split(b" ")
                        if len(parts) >= 2 and parts[0] == b"GET":
                            target = parts[1].decode("latin-1")
                            if target.split("?", 1)[0] == self.path:
                                await stream.send(_PAGE)
                                return f"http://127.0.0.1:{self.port}{target}"
                        await stream.send(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
        except TimeoutError:
            raise AuthError("no authorization redirect arrived in time") from None
        finally:
            await listeners.aclose()
