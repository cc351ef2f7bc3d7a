"""Where tokens and client registrations live between requests and between processes.

Keys: tokens by (authorization-server issuer, resource), registrations by issuer, so a
server that moves to another authorization server gets a new registration and tokens
(authorization.mdx §Client Registration: credentials are bound to the server that issued
them). Each token remembers a digest of the client credentials it was obtained with
(:func:`credentials_fingerprint`): the provider drops a stored token whose credentials have
changed since. :class:`FileTokenStore` keeps one JSON file per user in the platform's config folder
(``platformdirs.user_config_dir("mcpbind")``), created ``0600`` in a ``0700`` folder and
replaced atomically.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

__all__ = [
    "ClientInfo",
    "FileTokenStore",
    "InMemoryTokenStore",
    "TokenStore",
    "Tokens",
    "credentials_fingerprint",
    "default_token_path",
]


@dataclass
class Tokens:
    """An access token and what came with it. ``repr`` never shows a token."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None
    #: the private JWK of the DPoP key a DPoP-bound token is bound to (RFC 9449 §6)
    dpop_jwk: dict[str, Any] | None = field(default=None, repr=False)
    #: :func:`credentials_fingerprint` of the client credentials the token was obtained
    #: with: a token (and its refresh token) is not reused once they change
    client: str | None = field(default=None, repr=False)

    def expired(self, skew: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at - skew

    @classmethod
    def from_response(cls, body: dict[str, Any], previous: Tokens | None = None) -> Tokens:
        """From a token response (RFC 6749 §5.1); a refresh token not rotated is kept."""
        expires_in = body.get("expires_in")
        refresh = body.get("refresh_token")
        scope = body.get("scope")
        return cls(
            access_token=str(body["access_token"]),
            token_type=str(body.get("token_type") or "Bearer"),
            expires_at=time.time() + float(expires_in)
            if isinstance(expires_in, int | float)
            else None,
            refresh_token=refresh
            if isinstance(refresh, str)
            else (previous.refresh_token if previous else None),
            scope=scope if isinstance(scope, str) else (previous.scope if previous else None),
        )


def credentials_fingerprint(
    client_id: str | None, client_secret: str | None = None, private_key: str | bytes | None = None
) -> str | None:
    """A digest of a pre-registered client's credentials (``None`` without a client id: a
    registration of the authorization server's, kept in the store). Tokens remember it, so
    that a changed client id, secret or key is never served a token obtained with the old
    ones; the secret itself is never stored with them."""
    if client_id is None:
        return None
    digest = hashlib.sha256()
    key = private_key.encode() if isinstance(private_key, str) else private_key
    for part in (client_id.encode(), (client_secret or "").encode(), key or b""):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


@dataclass
class ClientInfo:
    """A client's registration with one authorization server. ``repr`` hides the secret."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    source: str = "dcr"  # "pre-registered", "cimd", "dcr"


class TokenStore(Protocol):
    """Tokens by (issuer, resource) and registrations by issuer."""

    def load(self, issuer: str, resource: str) -> Tokens | None: ...
    def save(self, issuer: str, resource: str, tokens: Tokens) -> None: ...
    def delete(self, issuer: str, resource: str) -> None: ...
    def load_client(self, issuer: str) -> ClientInfo | None: ...
    def save_client(self, issuer: str, client: ClientInfo) -> None: ...


class InMemoryTokenStore:
    """Tokens for the life of the process."""

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str], Tokens] = {}
        self.clients: dict[str, ClientInfo] = {}

    def load(self, issuer: str, resource: str) -> Tokens | None:
        return self.tokens.get((issuer, resource))

    def save(self, issuer: str, resource: str, tokens: Tokens) -> None:
        self.tokens[(issuer, resource)] = tokens

    def delete(self, issuer: str, resource: str) -> None:
        self.tokens.pop((issuer, resource), None)

    def load_client(self, issuer: str) -> ClientInfo | None:
        return self.clients.get(issuer)

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        self.clients[issuer] = client


def default_token_path() -> Path:
    """``<user config dir>/mcpbind/tokens.json`` (one file per user)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("mcpbind")) / "tokens.json"


class _FileData(msgspec.Struct):
    tokens: dict[str, dict[str, Any]] = {}
    clients: dict[str, dict[str, Any]] = {}


class FileTokenStore:
    """Tokens in a ``0600`` JSON file, read on every load (another process may have
    refreshed them) and written atomically."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_token_path()

    @staticmethod
    def _key(issuer: str, resource: str) -> str:
        return f"{issuer} {resource}"

    def _read(self) -> _FileData:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return _FileData()
        try:
            return msgspec.json.decode(raw, type=_FileData)
        except msgspec.DecodeError:
            return _FileData()  # a damaged file is replaced on the next save

    def _write(self, data: _FileData) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(msgspec.json.encode(data))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def load(self, issuer: str, resource: str) -> Tokens | None:
        found = self._read().tokens.get(self._key(issuer, resource))
        try:
            return Tokens(**found) if found else None
        except TypeError:
            return None

    def save(self, issuer: str, resource: str, tokens: Tokens) -> None:
        data = self._read()
        data.tokens[self._key(issuer, resource)] = asdict(tokens)
        self._write(data)

    def delete(self, issuer: str, resource: str) -> None:
        data = self._read()
        if data.tokens.pop(self._key(issuer, resource), None) is not None:
            self._write(data)

    def load_client(self, issuer: str) -> ClientInfo | None:
        found = self._read().clients.get(issuer)
        try:
            return ClientInfo(**found) if found else None
        except TypeError:
            return None

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        data = self._read()
        data.clients[issuer] = asdict(client)
        self._write(data)
