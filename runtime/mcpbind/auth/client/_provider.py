"""The OAuth client as an ``httpx2.Auth``: what the HTTP transport's ``auth=`` takes.

Every request to the MCP server goes through :meth:`OAuthBase.async_auth_flow`:

* the current access token is attached (``Bearer``, or ``DPoP`` with a fresh proof per
  request, RFC 9449 §7.1), only to the MCP server's own origin; an expired one is refreshed
  first when a refresh token exists;
* a 401 runs discovery (:mod:`.discovery`) and obtains a token: a stored one, a refresh, or
  the subclass's grant; the request is sent again once (a second 401 is an error);
* a 401 ``use_dpop_nonce`` from the server is retried once with its ``DPoP-Nonce``;
* a 403 ``insufficient_scope`` re-authorizes with the union of the scopes asked for so far
  and the challenged ones (step-up, authorization.mdx §Scope Challenge Handling), at most
  ``max_step_up`` times per request.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Generator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2

from .discovery import Challenge, Discovery, discover, parse_challenges
from .errors import AuthError
from .fetch import Fetcher
from .grants import TokenEndpoint
from .store import InMemoryTokenStore, Tokens, TokenStore
from .urls import is_loopback_url, origin

__all__ = ["OAuthBase"]

logger = logging.getLogger("mcpbind.auth")


def _server_url(url: httpx2.URL) -> str:
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _challenge(response: httpx2.Response) -> Challenge | None:
    found: list[Challenge] = []
    for value in response.headers.get_list("www-authenticate"):
        found += parse_challenges(value)
    usable = [c for c in found if c.scheme.lower() in ("bearer", "dpop")]
    return usable[0] if usable else (found[0] if found else None)


class OAuthBase(httpx2.Auth):
    """What every grant shares. Subclasses implement :meth:`obtain`."""

    requires_request_body = True
    #: the grant types this client registers for (DCR ``grant_types``)
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")

    def __init__(
        self,
        *,
        scopes: list[str] | None = None,
        token_store: TokenStore | None = None,
        dpop: bool | None = None,
        offline_access: bool = True,
        max_step_up: int = 2,
        timeout: float = 10.0,
    ) -> None:
        self.scopes = scopes
        self.store: TokenStore = token_store if token_store is not None else InMemoryTokenStore()
        self.dpop = dpop
        self.offline_access = offline_access
        self.max_step_up = max_step_up
        self.timeout = timeout
        self.tokens: Tokens | None = None
        self.discovery: Discovery | None = None
        self._issuer: str | None = None  # of self.tokens
        self._origin: str | None = None  # the MCP server's; tokens go nowhere else
        self._requested: list[str] = []
        self._dpop_key: Any = None
        self._rs_nonce: str | None = None
        self._as_nonces: dict[str, str] = {}
        self._lock: anyio.Lock | None = None

    # ------------------------------------------------------------------ subclass API
    async def obtain(
        self, endpoint: TokenEndpoint, discovery: Discovery, scopes: list[str]
    ) -> Tokens:
        """A new token from the authorization server (the grant of this client)."""
        raise NotImplementedError

    def configure(self, endpoint: TokenEndpoint) -> None:
        """Set the endpoint's client and signing key before refresh or :meth:`obtain`."""

    def credentials(self) -> str | None:
        """:func:`credentials_fingerprint` of this client's credentials (``None``: none
        given, a registration the store keeps); stored tokens obtained with other ones are
        dropped."""
        return None

    # ------------------------------------------------------------------ httpx2.Auth
    def sync_auth_flow(
        self, request: httpx2.Request
    ) -> Generator[httpx2.Request, httpx2.Response, None]:
        raise RuntimeError("mcpbind's OAuth client works with httpx2.AsyncClient only")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._origin is None:
            self._origin = origin(str(request.url))
        await self._refresh_if_expired()
        sent = self._attach(request)
        response = yield request
        step_ups = nonce_retried = rounds = 0
        granted = False  # a token from a new grant was refused: stop, do not loop
        while True:
            self._learn_nonce(response)
            status = response.status_code
            challenge = _challenge(response) if status in (401, 403) else None
            if (
                status == 401
                and challenge is not None
                and challenge.error == "use_dpop_nonce"
                and self._dpop_key is not None
                and not nonce_retried
            ):
                nonce_retried += 1
            elif status == 401:
                rounds += 1
                if granted or rounds > 3:
                    raise AuthError(
                        f"{_server_url(request.url)} refused the new access token (HTTP 401)",
                        status=401,
                    )
                await response.aread()
                # a stored or refreshed token may still be refused: then one real grant
                granted = await self._authorize(request, challenge, sent, step_up=False)
            elif (
                status == 403 and challenge is not None and challenge.error == "insufficient_scope"
            ):
                if step_ups >= self.max_step_up:
                    raise AuthError(
                        f"{_server_url(request.url)} still answers insufficient_scope after "
                        f"{step_ups} step-up authorization(s); giving up",
                        status=403,
                    )
                step_ups += 1
                await response.aread()
                await self._authorize(request, challenge, sent, step_up=True)
            else:
                return
            sent = self._attach(request)
            response = yield request

    # ------------------------------------------------------------------ tokens on requests
    def _attach(self, request: httpx2.Request) -> str | None:
        tokens = self.tokens
        if tokens is None or origin(str(request.url)) != self._origin:
            return None
        if tokens.token_type.lower() == "dpop" and self._dpop_key is not None:
            request.headers["authorization"] = f"DPoP {tokens.access_token}"
            request.headers["dpop"] = self._dpop_key.proof(
                request.method,
                str(request.url),
                access_token=tokens.access_token,
                nonce=self._rs_nonce,
            )
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"
        return tokens.access_token

    def _learn_nonce(self, response: httpx2.Response) -> None:
        nonce = response.headers.get("dpop-nonce")
        if nonce and self._dpop_key is not None:
            self._rs_nonce = nonce

    # ------------------------------------------------------------------ getting tokens
    def _lock_(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def _fetcher(self) -> Fetcher:
        return Fetcher(local_ok=is_loopback_url(self._origin or ""), timeout=self.timeout)

    def _endpoint(self, fetcher: Fetcher, discovery: Discovery) -> TokenEndpoint:
        server = discovery.server
        use_dpop = self.dpop is True or (
            self.dpop is None and server.supports("dpop_signing_alg_values_supported", "ES256")
        )
        if use_dpop and self._dpop_key is None:
            from .jose import DPoPKey

            self._dpop_key = DPoPKey()
        endpoint = TokenEndpoint(
            fetcher, server, dpop=self._dpop_key if use_dpop else None, nonces=self._as_nonces
        )
        self.configure(endpoint)
        return endpoint

    async def _refresh_if_expired(self) -> None:
        tokens, discovery = self.tokens, self.discovery
        if tokens is None or discovery is None or not tokens.expired():
            return
        async with self._lock_():
            if self.tokens is not tokens:
                return
            if tokens.refresh_token:
                fetcher = self._fetcher()
                try:
                    await self._refresh(self._endpoint(fetcher, discovery), discovery, tokens)
                    return
                except AuthError as exc:
                    logger.info("refreshing the access token failed: %s", exc)
                finally:
                    await fetcher.aclose()
            self.tokens = None  # the 401 that follows starts over

    async def _refresh(self, endpoint: TokenEndpoint, discovery: Discovery, tokens: Tokens) -> None:
        assert tokens.refresh_token is not None
        fresh = await endpoint.request(
            {
                "grant_type": "refresh_token",
                "refresh_token": tokens.refresh_token,
                "resource": discovery.resource,
            },
            previous=tokens,
        )
        self._keep(discovery, fresh)

    async def _renew(
        self, endpoint: TokenEndpoint, discovery: Discovery, sent: str | None, stored: Tokens | None
    ) -> bool:
        """A token without a new authorization: the stored one, or a refresh."""
        issuer = discovery.server.issuer
        if sent is not None:  # the server refused it: never offer it again
            self.store.delete(issuer, discovery.resource)
            candidate = self.tokens if self._issuer == issuer else None
        elif stored is not None and not stored.expired():
            self.tokens, self._issuer = stored, issuer
            return True
        else:
            candidate = stored
        if candidate is None or not candidate.refresh_token:
            return False
        try:
            await self._refresh(endpoint, discovery, candidate)
            return True
        except AuthError as exc:
            logger.info("refresh failed, authorizing again: %s", exc)
            return False

    def _keep(self, discovery: Discovery, tokens: Tokens) -> None:
        if self._dpop_key is not None and tokens.token_type.lower() == "dpop":
            tokens.dpop_jwk = self._dpop_key.private_jwk()  # a new process needs the same key
        tokens.client = self.credentials()
        self.tokens = tokens
        self._issuer = discovery.server.issuer
        self.store.save(discovery.server.issuer, discovery.resource, tokens)

    def _scopes_for(
        self, challenge: Challenge | None, discovery: Discovery, step_up: bool
    ) -> list[str]:
        challenged = challenge.scope.split() if challenge is not None and challenge.scope else []
        if step_up:  # what was asked for before, and what is missing (SEP-2350)
            wanted = self._requested + [s for s in challenged if s not in self._requested]
        elif self.scopes is not None:
            wanted = list(self.scopes)
        elif challenged:
            wanted = challenged
        else:
            wanted = list(discovery.scopes_supported or [])
        if (
            wanted
            and self.offline_access
            and "refresh_token" in self.grant_types
            and "offline_access" not in wanted
            and discovery.server.supports("scopes_supported", "offline_access")
        ):
            wanted.append("offline_access")
        return wanted

    async def _authorize(
        self,
        request: httpx2.Request,
        challenge: Challenge | None,
        sent: str | None,
        *,
        step_up: bool,
    ) -> bool:
        """Get a token for ``request``; True when it comes from a new grant (not the store,
        a refresh, or another request's)."""
        async with self._lock_():
            if not step_up and self.tokens is not None and self.tokens.access_token != sent:
                return False  # another request already got a new token
            fetcher = self._fetcher()
            try:
                discovery = await discover(
                    fetcher,
                    _server_url(request.url),
                    challenge,
                    protocol_version=request.headers.get("mcp-protocol-version"),
                )
                issuer = discovery.server.issuer
                if self._issuer is not None and issuer != self._issuer:
                    logger.info("the server moved to authorization server %s", issuer)
                    self.tokens, self._requested = None, []
                self.discovery = discovery
                stored = None
                if not step_up and sent is None:
                    stored = self.store.load(issuer, discovery.resource)
                    if stored is not None and stored.client != self.credentials():
                        logger.info("the client credentials changed: the stored token is dropped")
                        self.store.delete(issuer, discovery.resource)
                        stored = None
                    if stored is not None and stored.dpop_jwk:
                        from .jose import DPoPKey  # the key the stored tokens are bound to

                        self._dpop_key = DPoPKey.from_jwk(stored.dpop_jwk)
                endpoint = self._endpoint(fetcher, discovery)
                if not step_up and await self._renew(endpoint, discovery, sent, stored):
                    return False
                scopes = self._scopes_for(challenge, discovery, step_up)
                self._requested = [s for s in scopes if s != "offline_access"]
                tokens = await self.obtain(endpoint, discovery, scopes)
                self._keep(discovery, tokens)
                return True
            finally:
                await fetcher.aclose()
