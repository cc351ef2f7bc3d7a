"""``ResourceServer``: the bearer-token check of a Streamable HTTP MCP server and its
protected-resource metadata (2025-11-25 and 2026-07-28 basic/authorization).

``StreamableHTTPApp(server, auth=ResourceServer(verifier, resource=..., authorization_servers=
[...]))`` (or ``serve_http(..., auth=...)``) runs it before anything else on each HTTP request:

* the metadata document (RFC 9728 §3) at the well-known URI for the resource, the path
  inserted after ``/.well-known/oauth-protected-resource`` (``https://h/mcp`` ->
  ``https://h/.well-known/oauth-protected-resource/mcp``);
* no token: 401 with ``WWW-Authenticate: Bearer resource_metadata="…"`` and the ``scope``
  required (§Scope Selection Strategy; RFC 9728 §5.1);
* a token the verifier refuses: 401 ``error="invalid_token"``; a verifier that cannot reach
  the authorization server: 503;
* a token without the scopes the server requires, or those declared (``scopes=``) by the
  tool, prompt or resource the request names: 403 ``error="insufficient_scope"`` with every
  scope the operation needs in one challenge (§Scope Challenge Handling). Scope hierarchies
  (a broader scope implying narrower ones) come from ``scope_hierarchy``;
* a DPoP-bound token (``cnf.jkt``, RFC 9449) only with the ``DPoP`` scheme and a valid
  proof for this request (:mod:`.dpop`); 401 ``invalid_dpop_proof`` otherwise. The metadata
  lists ``dpop_signing_alg_values_supported`` unless ``dpop=False``;
* otherwise the principal goes to ``scope["mcp.principal"]`` (sessions are bound to it) and
  to handlers as ``ctx.principal``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import msgspec

from ...http.server._asgi import (
    OWS,
    BodyError,
    Receive,
    Scope,
    Send,
    read_body,
    send_error,
    send_response,
)
from ...protocol.errors import INVALID_REQUEST
from ...server.principal import Principal, current_principal
from ..client.urls import canonical_resource
from .dpop import DPoPChecker, InvalidProof, bound_key
from .scopes import required_scopes
from .verifier import InvalidToken, TokenVerifier, VerifierUnavailable

if TYPE_CHECKING:
    from ...http.server.auth_hook import AuthTarget

__all__ = ["MetadataApp", "ResourceServer", "metadata_path"]

logger = logging.getLogger("mcpbind.auth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
_CORS = [(b"access-control-allow-origin", b"*")]


def metadata_path(resource: str) -> str:
    """The path of the protected-resource metadata of ``resource`` (RFC 9728 §3.1)."""
    path = urlsplit(resource).path.rstrip("/")
    return WELL_KNOWN + path


class ResourceServer:
    """The resource-server side of MCP authorization: see the module docstring.

    ``resource``: this server's canonical URI (the MCP endpoint URL clients use; tokens
    must name it). ``authorization_servers``: issuer URLs (at least one).
    ``scopes_supported``: published in the metadata (the scopes for basic use).
    ``required_scopes``: every request needs them. ``resource_name`` and ``metadata``:
    more fields for the document. ``dpop``: accept DPoP-bound tokens (with their proofs);
    a :class:`~.dpop.DPoPChecker` to tune the proof checks.
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Iterable[str] = (),
        scope_hierarchy: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        dpop: bool | DPoPChecker = True,
    ) -> None:
        parts = urlsplit(resource)
        if parts.scheme not in ("https", "http") or not parts.netloc or parts.fragment:
            raise ValueError(f"resource must be an absolute http(s) URL, not {resource!r}")
        if not authorization_servers:
            raise ValueError("authorization_servers needs at least one issuer URL")
        self.verifier = verifier
        self.resource = canonical_resource(resource)
        self.required = frozenset(required_scopes)
        self.hierarchy = {k: frozenset(v) for k, v in (scope_hierarchy or {}).items()}
        self.metadata_path = metadata_path(self.resource)
        self._origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        self.metadata_url = self._origin + self.metadata_path
        self.dpop = (DPoPChecker() if dpop is True else dpop) or None
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if scopes_supported is not None:
            document["scopes_supported"] = list(scopes_supported)
        if resource_name is not None:
            document["resource_name"] = resource_name
        if self.dpop is not None:
            document["dpop_signing_alg_values_supported"] = self.dpop.algorithms
        document.update(metadata or {})
        self.document = msgspec.json.encode(document)
        #: The document as an ASGI app, to route at :attr:`metadata_path` when the MCP app is
        #: mounted below the origin's root (the hook serves it otherwise).
        self.metadata_app = MetadataApp(self.document)
        challenge_scope = self.required or frozenset(scopes_supported or ())
        self._scope_hint = " ".join(sorted(challenge_scope))

    async def __call__(
        self, app: AuthTarget, scope: Scope, receive: Receive, send: Send
    ) -> Receive | None:
        """Check one HTTP request; the ``receive`` to go on with, or ``None`` once answered."""
        if scope["path"] == self.metadata_path:
            await self.metadata_app(scope, receive, send)
            return None
        found = _credentials(scope["headers"], self.dpop is not None)
        if found is None:
            await self._challenge(send, 401, None, "Unauthorized: a bearer token is required")
            return None
        scheme, token, proofs = found
        try:
            principal = await self.verifier.verify(token, self.resource)
            self._check_binding(scope, scheme, token, proofs, bound_key(principal.claims))
        except InvalidToken as exc:
            logger.debug("token refused: %s", exc)
            error = "invalid_dpop_proof" if isinstance(exc, InvalidProof) else "invalid_token"
            await self._challenge(send, 401, error, f"Unauthorized: {exc}", scheme)
            return None
        except VerifierUnavailable as exc:
            logger.warning("cannot verify tokens: %s", exc)
            await send_error(
                send,
                503,
                INVALID_REQUEST,
                "Service Unavailable: cannot verify the token now",
                [(b"retry-after", b"5")],
            )
            return None
        if not self.satisfies(principal, self.required):
            await self._insufficient(send, self.required)
            return None
        scope["mcp.principal"] = principal
        current_principal.set(principal)
        _refresh_session(app, scope, principal)
        if not (app.server.scopes or app.server.mounted) or scope["method"] != "POST":
            return receive
        try:
            body = await read_body(receive, app.max_body_size, app.body_timeout)
        except BodyError as exc:
            await send_error(send, exc.status, INVALID_REQUEST, exc.message)
            return None
        needed = required_scopes(app.server, body)
        if not self.satisfies(principal, needed):
            await self._insufficient(send, needed | self.required)
            return None
        return _replay(body, receive)

    def _check_binding(
        self, scope: Scope, scheme: str, token: str, proofs: list[str], jkt: str | None
    ) -> None:
        """RFC 9449 §7.1-7.2: a bound token needs the DPoP scheme and its proof, and the
        DPoP scheme needs a bound token."""
        if scheme == "bearer":
            if jkt is not None:
                raise InvalidToken("the token is DPoP-bound: send it with the DPoP scheme")
            return
        if jkt is None:
            raise InvalidToken("the token is not DPoP-bound: send it as a Bearer token")
        if len(proofs) != 1:
            raise InvalidProof("exactly one DPoP proof header is required")
        assert self.dpop is not None
        url = self._origin + scope["path"]  # ASGI: path includes root_path
        self.dpop.check(proofs[0], method=scope["method"], url=url, token=token, jkt=jkt)

    # ------------------------------------------------------------------ scopes
    def satisfies(self, principal: Principal, needed: frozenset[str]) -> bool:
        """Whether the principal's scopes, with those they imply, cover ``needed``."""
        if needed <= principal.scopes:
            return True
        granted = set(principal.scopes)
        pending = list(granted)
        while pending:  # the closure under scope_hierarchy
            for implied in self.hierarchy.get(pending.pop(), ()):
                if implied not in granted:
                    granted.add(implied)
                    pending.append(implied)
        return needed <= granted

    # ------------------------------------------------------------------ answers
    async def _challenge(
        self, send: Send, status: int, error: str | None, message: str, scheme: str = "bearer"
    ) -> None:
        params = [f'resource_metadata="{self.metadata_url}"']
        if self._scope_hint:
            params.append(f'scope="{self._scope_hint}"')
        if error is not None:
            params[:0] = [f'error="{error}"', f'error_description="{_quoted(message)}"']
        if scheme == "dpop" and self.dpop is not None:
            params.append(f'algs="{" ".join(self.dpop.algorithms)}"')
        header = (("DPoP " if scheme == "dpop" else "Bearer ") + ", ".join(params)).encode()
        await send_error(send, status, INVALID_REQUEST, message, [(b"www-authenticate", header)])

    async def _insufficient(self, send: Send, needed: frozenset[str]) -> None:
        scopes = " ".join(sorted(needed))
        header = (
            f'Bearer error="insufficient_scope", scope="{scopes}", '
            f'resource_metadata="{self.metadata_url}", '
            f'error_description="this operation needs the scopes: {scopes}"'
        ).encode()
        await send_error(
            send,
            403,
            INVALID_REQUEST,
            f"Forbidden: insufficient scope (needs {scopes})",
            [(b"www-authenticate", header)],
        )


class MetadataApp:
    """An ASGI app serving one protected-resource metadata document (RFC 9728 §3.2): GET or
    HEAD, readable cross-origin (browser-based clients fetch it too)."""

    def __init__(self, document: bytes) -> None:
        self.document = document

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        if method in ("GET", "HEAD"):
            headers = [*_CORS, (b"cache-control", b"public, max-age=300")]
            # HEAD: the same headers (Content-Length too); the ASGI server drops the body.
            await send_response(send, 200, self.document, headers, b"application/json")
        elif method == "OPTIONS":
            headers = [*_CORS, (b"access-control-allow-methods", b"GET, OPTIONS")]
            await send_response(send, 204, b"", headers)
        else:
            await send_error(
                send, 405, INVALID_REQUEST, "Method Not Allowed: use GET", [(b"allow", b"GET")]
            )


def _credentials(
    headers: Iterable[tuple[bytes, bytes]], dpop: bool
) -> tuple[str, str, list[str]] | None:
    """``(scheme, token, DPoP proofs)`` from the one ``Authorization`` header (``Bearer``,
    RFC 6750 §2.1; ``DPoP``, RFC 9449 §7.1, when accepted), else ``None``."""
    found: tuple[str, str] | None = None
    proofs: list[str] = []
    for name, value in headers:
        name = name.lower()
        if name == b"authorization":
            if found is not None:
                return None  # two Authorization headers: refuse rather than pick one
            scheme, _, token = value.decode("latin-1").strip(OWS).partition(" ")
            found = (scheme.lower(), token.strip(OWS))
        elif name == b"dpop":
            proofs.append(value.decode("latin-1").strip(OWS))
    if (
        found is None
        or not found[1]
        or found[0] not in (("bearer", "dpop") if dpop else ("bearer",))
    ):
        return None
    return found[0], found[1], proofs


def _refresh_session(app: AuthTarget, scope: Scope, principal: Principal) -> None:
    """Give the request's session (if it is this principal's) the newest principal, so its
    handlers see the scopes of a refreshed or stepped-up token."""
    session = app.session_of(scope)
    if session is not None and session.principal == principal:
        session.server_session.principal = principal


def _quoted(text: str) -> str:
    """``text`` safe inside a quoted-string of a challenge (RFC 9110 §5.6.4)."""
    return "".join(c if c.isprintable() and c not in '"\\' else "'" for c in text)[:200]


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the body already read, then the real messages."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Any:
        return pending.pop() if pending else await receive()

    return replay
