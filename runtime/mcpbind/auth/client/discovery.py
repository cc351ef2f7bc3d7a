"""Finding the authorization server of an MCP server.

* ``WWW-Authenticate`` challenges (RFC 6750 §3, RFC 9449 §7.1): scheme, ``resource_metadata``,
  ``scope``, ``error``.
* Protected-resource metadata (RFC 9728; authorization.mdx §Protected Resource Metadata
  Discovery): the challenge's ``resource_metadata`` URL, else the path-based well-known URI,
  else the root one. Its ``resource`` must name this server (RFC 9728 §3.3).
* Authorization-server metadata (RFC 8414, OpenID Connect Discovery 1.0; §Authorization
  Server Metadata Discovery): the well-known URIs in the spec's priority order; the
  document's ``issuer`` must be identical to the issuer the URL was built from.
* 2025-03-26 (that revision's §Server Metadata Discovery): with no protected-resource
  metadata, the authorization server is the MCP server's origin, and without metadata its
  endpoints default to ``/authorize``, ``/token`` and ``/register`` there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .errors import AuthError
from .fetch import Fetcher
from .urls import canonical_resource, check_url

__all__ = [
    "AuthServer",
    "Challenge",
    "Discovery",
    "as_metadata_urls",
    "discover",
    "parse_challenges",
    "prm_urls",
]

_PARAM = re.compile(r'\s*([A-Za-z0-9_\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


@dataclass
class Challenge:
    """One ``WWW-Authenticate`` challenge."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")


def parse_challenges(header: str | None) -> list[Challenge]:
    """The challenges of a ``WWW-Authenticate`` value (auth-param lists, quoted strings)."""
    challenges: list[Challenge] = []
    text = (header or "").strip()
    while text:
        m = re.match(r"([A-Za-z][A-Za-z0-9!#$%&'*+\-.^_`|~]*)\s*", text)
        if not m:
            break
        current = Challenge(m.group(1))
        challenges.append(current)
        text = text[m.end() :]
        while text:
            p = _PARAM.match(text)
            if not p or p.end() == 0:
                break
            # a new scheme starts where a token is not followed by '='
            value = p.group(2) if p.group(2) is not None else p.group(3)
            current.params[p.group(1).lower()] = re.sub(r"\\(.)", r"\1", value or "")
            text = text[p.end() :]
        text = text.lstrip(", ")
    return challenges


@dataclass
class AuthServer:
    """An authorization server: its issuer and metadata (``legacy``: 2025-03-26 defaults)."""

    issuer: str
    metadata: dict[str, Any]
    legacy_defaults: bool = False

    def endpoint(self, name: str) -> str | None:
        value = self.metadata.get(name)
        return value if isinstance(value, str) and value else None

    def supports(self, key: str, value: str) -> bool:
        listed = self.metadata.get(key)
        return isinstance(listed, list) and value in listed


@dataclass
class Discovery:
    """What discovery found for one MCP server."""

    resource: str  # the RFC 8707 resource indicator to send
    server: AuthServer
    scopes_supported: list[str] | None  # the PRM's
    prm_found: bool


def prm_urls(server_url: str) -> list[str]:
    """Well-known protected-resource metadata URIs in the spec's order (path, then root)."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{origin}/.well-known/oauth-protected-resource")
    return urls


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization-server metadata URIs in the spec's priority order."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server",
        f"{origin}/.well-known/openid-configuration",
    ]


def _resource_matches(resource: str, server_url: str) -> bool:
    """RFC 9728 §3.3 / RFC 8707: the PRM's resource is this server's URI or a path prefix
    of it on the same origin."""
    want = canonical_resource(server_url)
    have = canonical_resource(resource)
    if have == want:
        return True
    have_parts, want_parts = urlsplit(have), urlsplit(want)
    if (have_parts.scheme, have_parts.netloc) != (want_parts.scheme, want_parts.netloc):
        return False
    prefix = have_parts.path.rstrip("/") + "/"
    return prefix == "/" or (want_parts.path + "/").startswith(prefix)


async def _fetch_prm(
    fetcher: Fetcher, server_url: str, challenge_url: str | None, headers: dict[str, str]
) -> dict[str, Any] | None:
    candidates = []
    if challenge_url:
        candidates.append(check_url(challenge_url, local_ok=fetcher.local_ok))
    candidates += [u for u in prm_urls(server_url) if u not in candidates]
    for url in candidates:
        reply = await fetcher.get(url, headers)
        if reply.ok and reply.json:
            return reply.json
    return None


async def fetch_as_metadata(
    fetcher: Fetcher, issuer: str, headers: dict[str, str]
) -> AuthServer | None:
    """The first valid metadata document of ``issuer``; ``None`` if none is served.
    A document whose ``issuer`` differs is never used (RFC 8414 §3.3)."""
    mismatched = None
    for url in as_metadata_urls(issuer):
        reply = await fetcher.get(url, headers)
        if not reply.ok or not reply.json:
            continue
        if reply.json.get("issuer") != issuer:
            mismatched = reply.json.get("issuer")
            continue
        return AuthServer(issuer, reply.json)
    if mismatched is not None:
        raise AuthError(
            f"authorization server metadata for {issuer!r} names issuer {mismatched!r}: "
            "refusing to use it (RFC 8414 §3.3)"
        )
    return None


async def discover(
    fetcher: Fetcher,
    server_url: str,
    challenge: Challenge | None,
    *,
    protocol_version: str | None = None,
) -> Discovery:
    """Protected-resource metadata, then the first authorization server's metadata."""
    headers = {"mcp-protocol-version": protocol_version} if protocol_version else {}
    prm = await _fetch_prm(
        fetcher, server_url, challenge.resource_metadata if challenge else None, headers
    )
    if prm is None:
        # 2025-03-26: the authorization server is the MCP server's origin.
        parts = urlsplit(server_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        server = await fetch_as_metadata(fetcher, origin, headers)
        if server is None:
            server = AuthServer(
                origin,
                {
                    "authorization_endpoint": f"{origin}/authorize",
                    "token_endpoint": f"{origin}/token",
                    "registration_endpoint": f"{origin}/register",
                },
                legacy_defaults=True,
            )
        return Discovery(canonical_resource(server_url), server, None, prm_found=False)
    resource = prm.get("resource")
    if not isinstance(resource, str) or not _resource_matches(resource, server_url):
        raise AuthError(
            f"protected-resource metadata names resource {resource!r}, not {server_url!r}: "
            "refusing to authorize (RFC 9728 §3.3)"
        )
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthError(
            f"protected-resource metadata of {server_url} lists no authorization server"
        )
    issuer = check_url(servers[0], local_ok=fetcher.local_ok)
    server = await fetch_as_metadata(fetcher, issuer, headers)
    if server is None:
        raise AuthError(f"no authorization server metadata found for {issuer}")
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        value = server.metadata.get(name)
        if isinstance(value, str):
            check_url(value, local_ok=fetcher.local_ok)
    scopes = prm.get("scopes_supported")
    scope_list = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None
    return Discovery(resource, server, scope_list, prm_found=True)
