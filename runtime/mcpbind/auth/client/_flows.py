"""The grants an MCP client uses, each an ``httpx2.Auth`` for ``auth=``:

* :class:`OAuth` — authorization code + PKCE for a person (authorization.mdx), with
  pre-registered credentials, a Client ID Metadata Document URL or dynamic registration;
* :class:`ClientCredentials` — the OAuth client-credentials extension
  (``io.modelcontextprotocol/oauth-client-credentials``): a client secret
  (``client_secret_basic``/``_post``) or a private key (``private_key_jwt``, RFC 7523 §2.2);
* :class:`JwtBearer` — a workload identity token as an RFC 7523 §2.1 JWT-bearer grant
  (workload identity federation, SEP-1933); a refused assertion is an error, never retried
  with another grant;
* :class:`EnterpriseManaged` — enterprise-managed authorization
  (``io.modelcontextprotocol/enterprise-managed-authorization``, SEP-990): the IdP's ID
  token is exchanged at the IdP for an ID-JAG (RFC 8693), which is the JWT-bearer grant at
  the MCP server's authorization server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ._provider import OAuthBase
from ._redirect import HeadlessRedirect, RedirectHandler
from .discovery import Discovery
from .errors import AuthError
from .grants import (
    JWT_BEARER,
    TOKEN_EXCHANGE,
    Registration,
    TokenEndpoint,
    authorization_code,
    known_client,
    obtain_client,
)
from .store import ClientInfo, Tokens, credentials_fingerprint

__all__ = ["ClientCredentials", "EnterpriseManaged", "JwtBearer", "OAuth"]

ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


def _signing_key(private_key: str | bytes | None, algorithm: str) -> Any:
    if private_key is None:
        return None
    from .jose import load_private_key

    return load_private_key(private_key, algorithm)


class OAuth(OAuthBase):
    """Authorization code with PKCE S256 for an interactive user.

    ``redirect_handler`` receives the authorization URL and returns the redirect (see
    :mod:`._redirect`); its ``redirect_uri`` attribute, or ``redirect_uri=``, is registered.
    Registration, in the spec's order: ``client_id`` (+ ``client_secret``), then
    ``client_metadata_url`` when the server supports Client ID Metadata Documents, then
    dynamic registration as ``client_name``.
    """

    def __init__(
        self,
        *,
        redirect_handler: RedirectHandler | None = None,
        redirect_uri: str | None = None,
        client_name: str = "mcpbind",
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_metadata: dict[str, Any] | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str = "ES256",
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.redirect_handler: RedirectHandler = redirect_handler or HeadlessRedirect()
        uri = redirect_uri or getattr(self.redirect_handler, "redirect_uri", None)
        if not isinstance(uri, str):
            raise ValueError("OAuth needs a redirect_uri (or a handler with one)")
        self.redirect_uri = uri
        self.registration = Registration(
            client_name,
            client_id,
            client_secret,
            token_endpoint_auth_method,
            client_metadata_url,
            dict(client_metadata or {}),
        )
        self._key = _signing_key(private_key, signing_algorithm)
        self._algorithm = signing_algorithm
        self._credentials = credentials_fingerprint(client_id, client_secret, private_key)

    def credentials(self) -> str | None:
        return self._credentials

    def configure(self, endpoint: TokenEndpoint) -> None:
        endpoint.signing_key, endpoint.signing_algorithm = self._key, self._algorithm
        endpoint.client = known_client(
            endpoint.server, self.store, self.registration, self.redirect_uri
        )

    async def obtain(
        self, endpoint: TokenEndpoint, discovery: Discovery, scopes: list[str]
    ) -> Tokens:
        endpoint.client = await obtain_client(
            endpoint.fetcher,
            discovery.server,
            self.store,
            self.registration,
            self.redirect_uri,
            list(self.grant_types),
        )
        return await authorization_code(
            endpoint,
            redirect_handler=self.redirect_handler,
            redirect_uri=self.redirect_uri,
            resource=discovery.resource,
            scopes=scopes,
        )


class ClientCredentials(OAuthBase):
    """The client-credentials grant: ``client_secret`` or ``private_key`` (PEM)."""

    grant_types = ("client_credentials",)

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str = "ES256",
        token_endpoint_auth_method: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if client_secret is None and private_key is None:
            raise ValueError("ClientCredentials needs client_secret or private_key")
        method = token_endpoint_auth_method or ("private_key_jwt" if private_key else None)
        self.client = ClientInfo(client_id, client_secret, method, [], "pre-registered")
        self._key = _signing_key(private_key, signing_algorithm)
        self._algorithm = signing_algorithm
        self._credentials = credentials_fingerprint(client_id, client_secret, private_key)

    def credentials(self) -> str | None:
        return self._credentials

    def configure(self, endpoint: TokenEndpoint) -> None:
        endpoint.client = self.client
        endpoint.signing_key, endpoint.signing_algorithm = self._key, self._algorithm

    async def obtain(
        self, endpoint: TokenEndpoint, discovery: Discovery, scopes: list[str]
    ) -> Tokens:
        grant = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scopes:
            grant["scope"] = " ".join(scopes)
        return await endpoint.request(grant)


Assertion = str | Callable[[], str | Awaitable[str]]


async def _value(source: Assertion) -> str:
    if isinstance(source, str):
        return source
    result = source()
    if not isinstance(result, str):
        result = await result
    return result


class JwtBearer(OAuthBase):
    """An RFC 7523 JWT-bearer grant with a workload identity token (``assertion``: the JWT,
    or a callable returning a fresh one). Errors are final: no retry, no other grant."""

    grant_types = (JWT_BEARER,)

    def __init__(
        self,
        assertion: Assertion,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.assertion = assertion
        self.client = (
            ClientInfo(client_id, client_secret, None, [], "pre-registered") if client_id else None
        )
        self._credentials = credentials_fingerprint(client_id, client_secret)

    def credentials(self) -> str | None:
        return self._credentials

    def configure(self, endpoint: TokenEndpoint) -> None:
        endpoint.client = self.client

    async def obtain(
        self, endpoint: TokenEndpoint, discovery: Discovery, scopes: list[str]
    ) -> Tokens:
        grant = {
            "grant_type": JWT_BEARER,
            "assertion": await _value(self.assertion),
            "resource": discovery.resource,
        }
        if scopes:
            grant["scope"] = " ".join(scopes)
        return await endpoint.request(grant)


class EnterpriseManaged(JwtBearer):
    """SEP-990: exchange the IdP ``id_token`` at ``idp_token_endpoint`` (as
    ``idp_client_id``) for an ID-JAG naming this authorization server and resource, then
    present it as a JWT-bearer grant authenticated as ``client_id``/``client_secret``."""

    def __init__(
        self,
        *,
        id_token: Assertion,
        idp_token_endpoint: str,
        client_id: str,
        client_secret: str | None = None,
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__("", client_id=client_id, client_secret=client_secret, **options)
        self.id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret

    async def obtain(
        self, endpoint: TokenEndpoint, discovery: Discovery, scopes: list[str]
    ) -> Tokens:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG_TYPE,
            "subject_token": await _value(self.id_token),
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": discovery.server.issuer,
            "resource": discovery.resource,
        }
        if scopes:
            form["scope"] = " ".join(scopes)
        if self.idp_client_id:
            form["client_id"] = self.idp_client_id
        if self.idp_client_secret:
            form["client_secret"] = self.idp_client_secret
        reply = await endpoint.fetcher.post(self.idp_token_endpoint, form=form)
        jag = reply.json.get("access_token")
        if not reply.ok or not isinstance(jag, str):
            raise AuthError(
                f"the identity provider's token exchange at {self.idp_token_endpoint} failed: "
                f"{reply.error_text()}"
            )
        grant = {"grant_type": JWT_BEARER, "assertion": jag, "resource": discovery.resource}
        if scopes:
            grant["scope"] = " ".join(scopes)
        return await endpoint.request(grant)
