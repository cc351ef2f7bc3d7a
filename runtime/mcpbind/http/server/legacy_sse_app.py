"""``LegacySSEApp``: the 2024-11-05 HTTP+SSE transport, for clients that predate Streamable
HTTP, as a pure ASGI application to serve beside ``StreamableHTTPApp``.

2024-11-05 basic/transports.mdx §HTTP with SSE: a ``GET`` on the SSE endpoint opens the
session; its first event, ``endpoint``, names the URL to ``POST`` messages to (here the message
path with a ``session_id`` query parameter); every server message, responses included, is a
``message`` event on that one stream. A POST is answered ``202 Accepted`` at once. The session
lives as long as its stream: when the client disconnects, it ends (there is no resumption in
this transport).

The same machinery as Streamable HTTP: sessions are ``HttpSession``s (whose messages all go to
their standalone stream here), written by the same SSE writer with keep-alive comments, behind
the same ``Host``/``Origin`` checks (§Security Warning: servers MUST validate ``Origin``), body
cap and deadline, session cap (503 beyond ``max_sessions``) and principal binding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from urllib.parse import parse_qs

from ...protocol import INVALID_REQUEST, SessionOptions
from ...protocol.classify import classify_body
from ...server.app import Server
from ...server.lifespan import LifespanClaim
from ._asgi import (
    Headers,
    Receive,
    RequestHeaders,
    Scope,
    Send,
    client_address,
    media_type,
    receive_body,
    send_error,
    send_response,
    serve_lifespan,
    take_lifespan,
)
from .auth_hook import AuthHook
from .endpoint_settings import EndpointSettings, SharedSettings
from .http_session import HttpSession, new_session_id
from .responses import (
    SESSION_NOT_FOUND,
    refuse_client_session,
    refuse_new_session,
    reply_sse,
    sessions_of,
)
from .security import refusal
from .streamable_app import StreamableHTTPApp, scope_principal
from .streams import MAX_PENDING, Outbox

__all__ = ["LegacySSEApp", "WithLegacySSE", "with_legacy_sse"]


def _relative_path(scope: Scope) -> str:
    """The request path below the mount point, without a trailing slash (``""`` for the
    root). ASGI servers and routers differ on whether ``path`` includes ``root_path``."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.rstrip("/")


class LegacySSEApp(SharedSettings):
    """Serve one ``mcpbind.Server`` over the 2024-11-05 HTTP+SSE transport.

    ``sse_path``: where clients ``GET`` the stream; ``message_path``: where they ``POST``
    (both below the mount point, ``scope["root_path"]``). ``allowed_hosts``,
    ``allowed_origins``, ``max_body_size``, ``max_sessions``, ``body_timeout``,
    ``sse_keepalive``, ``principal``, ``session_options``, ``max_sessions_per_client``,
    ``init_timeout`` (the stream ends if no handshake completed by then), ``auth`` and
    ``trusted_proxies`` mean what they mean for ``StreamableHTTPApp``; they make up the
    app's ``settings`` (:class:`~mcpbind.http.server.endpoint_settings.EndpointSettings`).
    ``settings``: that object itself, which the keywords then do not build: :meth:`beside`
    passes a ``StreamableHTTPApp``'s, so both endpoints follow one set of settings (an
    ``auth`` hook set on either later guards both). A legacy session lives with its stream
    on one worker: behind a balancer, route ``/sse`` and ``/messages/`` to one worker.
    """

    def __init__(
        self,
        server: Server,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        max_body_size: int = 4 * 1024 * 1024,
        max_sessions: int = 1000,
        body_timeout: float | None = 30.0,
        sse_keepalive: float | None = 15.0,
        principal: Callable[[Scope], object] = scope_principal,
        session_options: SessionOptions | None = None,
        max_sessions_per_client: int | None = 100,
        init_timeout: float | None = 10.0,
        auth: AuthHook | None = None,
        trusted_proxies: Iterable[str] | None = None,
        settings: EndpointSettings | None = None,
    ) -> None:
        if sse_path.rstrip("/") == message_path.rstrip("/"):
            raise ValueError("sse_path and message_path must differ")
        self.settings = settings or EndpointSettings.of(
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            trusted_proxies=trusted_proxies,
            max_body_size=max_body_size,
            max_sessions=max_sessions,
            body_timeout=body_timeout,
            sse_keepalive=sse_keepalive,
            principal=principal,
            session_options=session_options,
            max_sessions_per_client=max_sessions_per_client,
            init_timeout=init_timeout,
            auth=auth,
        )
        self.server = server
        self.sse_path = sse_path
        self.message_path = message_path
        #: Live sessions by id. Public for inspection (tests, metrics); do not mutate.
        self.sessions: dict[str, HttpSession] = {}
        #: This app's hold on the server's lifespan (``mcpbind.server.lifespan``).
        self.lifespan = LifespanClaim(server)

    def session_of(self, scope: Scope) -> HttpSession | None:
        """The live session the request's ``session_id`` query parameter names, if any."""
        ids = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [])
        return self.sessions.get(ids[0]) if len(ids) == 1 else None

    @classmethod
    def beside(
        cls,
        app: StreamableHTTPApp,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
    ) -> LegacySSEApp:
        """A legacy endpoint for ``app``'s server with ``app``'s limits and security settings."""
        return cls(app.server, sse_path=sse_path, message_path=message_path, settings=app.settings)

    def serves(self, scope: Scope) -> bool:
        """Whether a request's path is this transport's stream or message endpoint."""
        path = _relative_path(scope)
        return path in (self.sse_path.rstrip("/"), self.message_path.rstrip("/"))

    # ------------------------------------------------------------------ ASGI entry
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            self.settings.admit(scope)
            if (
                not self.lifespan.taken
                and self.server.lifespan is not None
                and not await take_lifespan(self.lifespan, send)
            ):
                return  # answered 503: the lifespan failed to start
            auth = self.settings.auth
            if auth is not None:
                checked = await auth(self, scope, receive, send)
                if checked is None:
                    return  # answered by the auth check (401, 403, the metadata)
                receive = checked
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await serve_lifespan(receive, send, self.aclose, self.lifespan.take)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    async def aclose(self) -> None:
        """End every session (their streams close); the app stays usable."""
        sessions = list(self.sessions.values())
        self.sessions.clear()
        for session in sessions:
            await session.close()
        await self.lifespan.drop()

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = _relative_path(scope)
        if path == self.sse_path.rstrip("/"):
            endpoint_method = "GET"
        elif path == self.message_path.rstrip("/"):
            endpoint_method = "POST"
        else:
            await send_error(send, 404, INVALID_REQUEST, "Not Found")
            return
        headers = Headers(scope["headers"])
        if (refused := refusal(self.settings.policy, scope, headers)) is not None:
            await send_error(send, refused[0], INVALID_REQUEST, refused[1])
            return
        if scope["method"] != endpoint_method:
            allow = endpoint_method.encode()
            message = f"Method Not Allowed: use {endpoint_method}"
            await send_error(send, 405, INVALID_REQUEST, message, [(b"allow", allow)])
        elif endpoint_method == "GET":
            await self._stream(scope, receive, send)
        else:
            await self._message(scope, receive, send, headers)

    # ------------------------------------------------------------------ GET: the session
    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(self.sessions) >= self.settings.max_sessions:
            await refuse_new_session(send)
            return
        address = client_address(scope)
        cap = self.settings.max_sessions_per_client
        if cap is not None and sessions_of(self.sessions.values(), address) >= cap:
            await refuse_client_session(send)
            return
        session_id = new_session_id()
        while session_id in self.sessions:  # pragma: no cover - 256 random bits
            session_id = new_session_id()
        session = HttpSession(
            self.server,
            session_id,
            principal=self.settings.principal(scope),
            options=self.settings.session_options,
        )
        session.client_address = address
        self.sessions[session_id] = session
        session.start()
        endpoint = f"{scope.get('root_path', '')}{self.message_path}?session_id={session_id}"
        outbox = Outbox(MAX_PENDING)
        session.attach(session.standalone, outbox)
        unborn = None
        if (
            self.settings.init_timeout is not None
        ):  # no handshake by then: the stream (session) ends
            loop = asyncio.get_running_loop()
            unborn = loop.call_later(self.settings.init_timeout, _end_unborn, session, outbox)
        try:
            await reply_sse(
                session,
                session.standalone,
                outbox,
                send,
                receive,
                [],
                head=b"event: endpoint\ndata: %s\n\n" % endpoint.encode(),
                last=0,
                replay=(),
                keepalive=self.settings.sse_keepalive,
            )
        finally:
            if unborn is not None:
                unborn.cancel()
            # The stream is the session: when the client leaves (or the outbox overflows),
            # the session ends and its handlers are cancelled.
            if self.sessions.get(session_id) is session:
                del self.sessions[session_id]
            await session.close()

    # ------------------------------------------------------------------ POST: a message
    async def _message(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if len(query.get("session_id", [])) != 1:
            await send_error(send, 400, INVALID_REQUEST, "Bad Request: session_id required")
            return
        session = self.session_of(scope)
        # Another principal's session is indistinguishable from an unknown one.
        if session is None or session.closed or session.principal != self.settings.principal(scope):
            await send_error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return
        if media_type(headers.get(b"content-type")) != "application/json":
            await send_error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: use application/json"
            )
            return
        body = await receive_body(
            send, receive, headers, self.settings.max_body_size, self.settings.body_timeout
        )
        if body is None:
            return
        classified = classify_body(body, self.settings.max_depth)
        if classified.error is not None:
            code, message = classified.error
            await send_error(send, 400, code, message)
            return
        session.expect(classified.request_ids, RequestHeaders(scope["headers"]))
        await session.feed(body)
        await send_response(send, 202, b"Accepted", content_type=b"text/plain")


def _end_unborn(session: HttpSession, outbox: Outbox) -> None:
    if not session.initialized:
        outbox.close()


class WithLegacySSE:
    """Streamable HTTP and the legacy endpoint in one ASGI application: requests for the
    legacy endpoint's two paths go to ``legacy``, everything else to ``app``."""

    def __init__(self, app: StreamableHTTPApp, legacy: LegacySSEApp) -> None:
        self.app = app
        self.legacy = legacy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send, self.aclose, self.app.lifespan.take)
        elif scope["type"] == "http" and self.legacy.serves(scope):
            await self.legacy(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def hand_back(self) -> bool:
        """``StreamableHTTPApp.hand_back`` (a legacy session is its stream: it ends with
        :meth:`aclose`)."""
        return self.app.hand_back()

    async def aclose(self) -> None:
        await self.legacy.aclose()
        await self.app.aclose()


def with_legacy_sse(
    app: StreamableHTTPApp, *, sse_path: str = "/sse", message_path: str = "/messages/"
) -> WithLegacySSE:
    """One ASGI application serving ``app`` (Streamable HTTP) and, at ``sse_path`` and
    ``message_path``, the 2024-11-05 HTTP+SSE transport for the same server with the same
    settings (:meth:`LegacySSEApp.beside`). Its ``aclose()`` ends the sessions of both."""
    return WithLegacySSE(
        app, LegacySSEApp.beside(app, sse_path=sse_path, message_path=message_path)
    )
