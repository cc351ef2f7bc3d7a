"""JOSE for the OAuth client, on joserfc (imported here only, so lazily):

* client assertions (RFC 7523 §2.2, ``private_key_jwt``; the client-credentials extension's
  JWT flavour): ``iss`` = ``sub`` = client id, ``aud`` = the authorization server's issuer;
* DPoP proofs (RFC 9449 §4.2): ``typ`` ``dpop+jwt``, the public key in ``jwk``, ``htm``,
  ``htu`` without query and fragment, ``iat``, a fresh ``jti``, ``ath`` with a token, the
  server's ``nonce`` when it asked for one.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey

from .errors import AuthError

__all__ = ["DPoPKey", "client_assertion", "load_private_key"]

_KEYS: dict[str, type[Any]] = {"ES": ECKey, "RS": RSAKey, "PS": RSAKey, "Ed": OKPKey}


def load_private_key(pem: str | bytes, algorithm: str) -> Any:
    """A joserfc key for ``algorithm`` (``ES256``, ``RS256``, ``EdDSA``...) from PEM."""
    kind = _KEYS.get(algorithm[:2])
    if kind is None:
        raise AuthError(f"unsupported signing algorithm {algorithm!r}")
    try:
        return kind.import_key(pem)
    except Exception as exc:
        raise AuthError(f"cannot load the {algorithm} private key: {type(exc).__name__}") from None


def client_assertion(
    key: Any, algorithm: str, client_id: str, audience: str, lifetime: int = 300
) -> str:
    """A signed JWT authenticating ``client_id`` to the server at ``audience``."""
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
        "jti": secrets.token_urlsafe(16),
    }
    return jwt.encode({"alg": algorithm, "typ": "JWT"}, claims, key, algorithms=[algorithm])


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """A DPoP key pair (P-256, ES256) and the proofs made with it."""

    algorithm = "ES256"

    def __init__(self, key: Any = None) -> None:
        self._key = key or ECKey.generate_key("P-256")
        self._public = self._key.as_dict(private=False)

    @classmethod
    def from_jwk(cls, jwk: dict[str, Any]) -> DPoPKey:
        """The key of a stored private JWK."""
        return cls(ECKey.import_key(jwk))

    def private_jwk(self) -> dict[str, Any]:
        """The key pair as a JWK, for the token store (which is 0600)."""
        return dict(self._key.as_dict(private=True))

    def thumbprint(self) -> str:
        return str(self._key.thumbprint())

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        if nonce:
            claims["nonce"] = nonce
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        header = {"alg": self.algorithm, "typ": "dpop+jwt", "jwk": self._public}
        return jwt.encode(header, claims, self._key, algorithms=[self.algorithm])
