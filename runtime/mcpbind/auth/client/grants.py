"""Token requests (RFC 6749 §3.2, §4.1, §4.4, §6; RFC 7523; RFC 8693) and registration.

* :class:`TokenEndpoint` sends grants to one authorization server's token endpoint with the
  client authentication it supports (``client_secret_basic``, ``client_secret_post``,
  ``none``, ``private_key_jwt``), the ``resource`` indicator (RFC 8707), a DPoP proof when
  DPoP is in use, and one retry with the server's nonce on ``use_dpop_nonce`` (RFC 9449 §8).
* :func:`authorization_code`: PKCE S256 only, and not at all when the metadata does not list
  S256 (authorization.mdx §Authorization Code Protection); ``state``; the ``iss`` response
  parameter checked as RFC 9207 §2.4 and the 2026-07-28 table say, by plain string equality.
* :func:`obtain_client`: pre-registered credentials, then a Client ID Metadata Document,
  then a stored registration, then dynamic registration (RFC 7591), in the spec's order.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ._redirect import RedirectHandler, call_redirect_handler
from .discovery import AuthServer
from .errors import AuthError
from .fetch import Fetcher
from .store import ClientInfo, Tokens, TokenStore
from .urls import origin

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "TokenEndpoint",
    "authorization_code",
    "check_iss",
    "known_client",
    "obtain_client",
    "pkce_pair",
]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_PREFERENCE = ("private_key_jwt", "client_secret_basic", "client_secret_post", "none")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) per RFC 7636 §4.1-4.2."""
    verifier = _b64url(secrets.token_bytes(48))
    return verifier, _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


@dataclass
class TokenEndpoint:
    """One authorization server's token endpoint, as one client."""

    fetcher: Fetcher
    server: AuthServer
    client: ClientInfo | None = None
    signing_key: Any = None
    signing_algorithm: str = "ES256"
    dpop: Any = None  # a jose.DPoPKey when DPoP is in use
    nonces: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        url = self.server.endpoint("token_endpoint")
        if url is None:
            raise AuthError(f"authorization server {self.server.issuer} has no token endpoint")
        return url

    def auth_method(self) -> str:
        client = self.client
        if client is None:
            return "none"
        if client.token_endpoint_auth_method:
            return client.token_endpoint_auth_method
        listed = self.server.metadata.get("token_endpoint_auth_methods_supported")
        usable = [
            m
            for m in _PREFERENCE
            if (m != "private_key_jwt" or self.signing_key is not None)
            and (not m.startswith("client_secret") or client.client_secret)
        ]
        if isinstance(listed, list):
            for method in usable:
                if method in listed:
                    return method
        return usable[0]

    def _authenticate(self, form: dict[str, str], headers: dict[str, str]) -> None:
        client = self.client
        if client is None:
            return
        method = self.auth_method()
        if method == "client_secret_basic" and client.client_secret:
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post" and client.client_secret:
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        elif method == "private_key_jwt":
            if self.signing_key is None:
                raise AuthError("private_key_jwt needs a private key")
            from .jose import client_assertion

            form["client_id"] = client.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = client_assertion(
                self.signing_key, self.signing_algorithm, client.client_id, self.server.issuer
            )
        else:
            form["client_id"] = client.client_id

    async def request(self, grant: dict[str, str], previous: Tokens | None = None) -> Tokens:
        """Send a grant; the tokens, or AuthError with the server's error code."""
        url = self.url
        for attempt in range(2):
            form = {k: v for k, v in grant.items() if v}
            headers: dict[str, str] = {}
            self._authenticate(form, headers)
            if self.dpop is not None:
                headers["dpop"] = self.dpop.proof("POST", url, nonce=self.nonces.get(origin(url)))
            reply = await self.fetcher.post(url, form=form, headers=headers)
            nonce = reply.headers.get("dpop-nonce")
            if nonce and self.dpop is not None:
                self.nonces[origin(url)] = nonce
            if (
                reply.status == 400
                and reply.json.get("error") == "use_dpop_nonce"
                and nonce
                and attempt == 0
            ):
                continue
            break
        if not reply.ok:
            raise AuthError(
                f"the token endpoint {url} refused the {grant.get('grant_type')} grant: "
                f"{reply.error_text()}",
                status=reply.status,
            )
        if not isinstance(reply.json.get("access_token"), str):
            raise AuthError(f"the token endpoint {url} returned no access_token")
        return Tokens.from_response(reply.json, previous)


def check_iss(server: AuthServer, iss: str | None) -> None:
    """RFC 9207 §2.4 with the 2026-07-28 table: a present ``iss`` must equal the recorded
    issuer exactly (no normalization); an absent one is refused only when advertised."""
    advertised = server.metadata.get("authorization_response_iss_parameter_supported") is True
    if iss is not None:
        if iss != server.issuer:
            raise AuthError(
                f"the authorization response came from issuer {iss!r}, not {server.issuer!r} "
                "(RFC 9207): refusing it"
            )
    elif advertised:
        raise AuthError(
            f"{server.issuer} advertises the iss response parameter but the authorization "
            "response has none (RFC 9207): refusing it"
        )


async def authorization_code(
    endpoint: TokenEndpoint,
    *,
    redirect_handler: RedirectHandler,
    redirect_uri: str,
    resource: str,
    scopes: list[str],
) -> Tokens:
    """The authorization-code grant with PKCE S256, end to end."""
    server = endpoint.server
    if not server.legacy_defaults and not server.supports(
        "code_challenge_methods_supported", "S256"
    ):
        raise AuthError(
            f"authorization server {server.issuer} does not list S256 in "
            "code_challenge_methods_supported: refusing to authorize without PKCE S256"
        )
    authorize = server.endpoint("authorization_endpoint")
    if authorize is None or endpoint.client is None:
        raise AuthError(f"authorization server {server.issuer} has no authorization endpoint")
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(24)
    params = {
        "response_type": "code",
        "client_id": endpoint.client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    url = authorize + ("&" if urlsplit(authorize).query else "?") + urlencode(params)
    callback = await call_redirect_handler(redirect_handler, url)
    query = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items()}
    check_iss(server, query.get("iss"))  # before acting on anything else, errors included
    if query.get("state") != state:
        raise AuthError("the authorization response's state does not match: refusing it")
    if "error" in query:
        raise AuthError(f"authorization was refused: {query['error']}")
    code = query.get("code")
    if not code:
        raise AuthError("the authorization response carries no code")
    return await endpoint.request(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": resource,
        }
    )


@dataclass
class Registration:
    """What the client says about itself, and credentials it already has."""

    client_name: str = "mcpbind"
    client_id: str | None = None
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    client_metadata_url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def known_client(
    server: AuthServer, store: TokenStore, registration: Registration, redirect_uri: str | None
) -> ClientInfo | None:
    """The client identity to use with ``server`` without registering: pre-registered,
    CIMD (when the server supports it), or a stored registration for this redirect URI."""
    if registration.client_id:
        return ClientInfo(
            registration.client_id,
            registration.client_secret,
            registration.token_endpoint_auth_method,
            [redirect_uri] if redirect_uri else [],
            "pre-registered",
        )
    if (
        registration.client_metadata_url
        and server.metadata.get("client_id_metadata_document_supported") is True
    ):
        return ClientInfo(registration.client_metadata_url, None, "none", [], "cimd")
    stored = store.load_client(server.issuer)
    if stored is not None and (redirect_uri is None or redirect_uri in stored.redirect_uris):
        return stored
    return None


async def obtain_client(
    fetcher: Fetcher,
    server: AuthServer,
    store: TokenStore,
    registration: Registration,
    redirect_uri: str | None,
    grant_types: list[str],
) -> ClientInfo:
    """Pre-registered, then CIMD, then a stored registration, then DCR."""
    known = known_client(server, store, registration, redirect_uri)
    if known is not None:
        return known
    endpoint = server.endpoint("registration_endpoint")
    if endpoint is None:
        raise AuthError(
            f"authorization server {server.issuer} offers no dynamic client registration and "
            "no client ID metadata documents: pass a pre-registered client_id"
        )
    listed = server.metadata.get("token_endpoint_auth_methods_supported")
    method = "none"
    if isinstance(listed, list) and "none" not in listed:
        method = next(
            (m for m in ("client_secret_basic", "client_secret_post") if m in listed), "none"
        )
    body: dict[str, Any] = {
        "client_name": registration.client_name,
        "redirect_uris": [redirect_uri] if redirect_uri else [],
        "grant_types": grant_types,
        "response_types": ["code"] if "authorization_code" in grant_types else [],
        "token_endpoint_auth_method": method,
        "application_type": "native",
        **registration.metadata,
    }
    reply = await fetcher.post(endpoint, json=body)
    client_id = reply.json.get("client_id")
    if not reply.ok or not isinstance(client_id, str):
        raise AuthError(f"dynamic client registration at {endpoint} failed: {reply.error_text()}")
    secret = reply.json.get("client_secret")
    granted = reply.json.get("token_endpoint_auth_method")
    info = ClientInfo(
        client_id,
        secret if isinstance(secret, str) else None,
        granted if isinstance(granted, str) else None,
        body["redirect_uris"],
        "dcr",
    )
    store.save_client(server.issuer, info)
    return info
