"""DPoP at the resource server (RFC 9449 §4.3 and §7): a ``DPoP``-bound access token is
accepted only with a fresh proof, signed by the key the token is bound to, for this request.

Checked: one well-formed proof JWT, ``typ`` ``dpop+jwt``, an accepted asymmetric ``alg``, a
public ``jwk`` in the header whose signature verifies, ``htm`` = the request method, ``htu`` =
the request URL (no query or fragment), ``iat`` within ``max_age`` seconds (``leeway`` into
the future), a ``jti`` not seen in that window (replay), ``ath`` = the hash of the token, and
the token's ``cnf.jkt`` = the key's RFC 7638 thumbprint. joserfc is imported on first use.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import Any

from ._jwt import DEFAULT_ALGORITHMS
from .verifier import InvalidToken

__all__ = ["DPoPChecker", "InvalidProof", "bound_key"]

_MAX_PROOF = 8 * 1024


class InvalidProof(InvalidToken):
    """The DPoP proof is missing or wrong: 401 ``invalid_dpop_proof``."""


def bound_key(claims: Mapping[str, Any]) -> str | None:
    """The ``cnf.jkt`` a token is bound to, or ``None`` for a bearer token."""
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, Mapping) else None
    return jkt if isinstance(jkt, str) else None


class DPoPChecker:
    """Checks proofs; remembers the ``jti`` of the last ``max_age`` seconds (``max_jti``
    at most) to refuse a replayed proof."""

    def __init__(
        self,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        *,
        max_age: int = 300,
        leeway: int = 30,
        max_jti: int = 100_000,
    ) -> None:
        self.algorithms = list(algorithms)
        self.max_age = max_age
        self.leeway = leeway
        self.max_jti = max_jti
        self._seen: OrderedDict[str, float] = OrderedDict()

    def check(self, proof: str, *, method: str, url: str, token: str, jkt: str) -> None:
        """Accept ``proof`` for this request and token, or raise :class:`InvalidProof`."""
        from joserfc import errors, jws, jwt
        from joserfc.jwk import JWKRegistry

        if len(proof) > _MAX_PROOF:
            raise InvalidProof("the DPoP proof is too long")
        try:
            header = jws.extract_compact(proof.encode("ascii")).protected
            if header.get("typ") != "dpop+jwt" or header.get("alg") not in self.algorithms:
                raise InvalidProof("the DPoP proof has the wrong typ or alg")
            raw_key = header.get("jwk")
            if not isinstance(raw_key, dict) or "d" in raw_key:
                raise InvalidProof("the DPoP proof carries no public jwk")
            key: Any = JWKRegistry.import_key(raw_key)
            claims = jwt.decode(proof, key, algorithms=self.algorithms).claims
        except (errors.JoseError, ValueError, TypeError, UnicodeEncodeError):
            raise InvalidProof("the DPoP proof is not a valid signed JWT") from None
        if key.thumbprint() != jkt:
            raise InvalidProof("the DPoP proof is signed by a key the token is not bound to")
        if claims.get("htm") != method or not _same_url(claims.get("htu"), url):
            raise InvalidProof("the DPoP proof is for another request (htm/htu)")
        digest = hashlib.sha256(token.encode("ascii", "replace")).digest()
        if claims.get("ath") != base64.urlsafe_b64encode(digest).rstrip(b"=").decode():
            raise InvalidProof("the DPoP proof is for another access token (ath)")
        now = time.time()
        iat, jti = claims.get("iat"), claims.get("jti")
        if not isinstance(iat, int | float) or not now - self.max_age <= iat <= now + self.leeway:
            raise InvalidProof("the DPoP proof is too old or from the future (iat)")
        if not isinstance(jti, str) or not jti:
            raise InvalidProof("the DPoP proof has no jti")
        self._remember(f"{jkt} {jti}", now)

    def _remember(self, key: str, now: float) -> None:
        seen = self._seen
        while seen and (next(iter(seen.values())) < now - self.max_age - self.leeway):
            seen.popitem(last=False)
        if key in seen:
            raise InvalidProof("the DPoP proof was already used (jti)")
        seen[key] = now
        if len(seen) > self.max_jti:
            seen.popitem(last=False)


def _same_url(htu: object, url: str) -> bool:
    """RFC 9449 §4.3 (9): ``htu`` matches without query and fragment, in normalized form."""
    from ..client.urls import canonical_resource

    if not isinstance(htu, str):
        return False
    return canonical_resource(htu) == canonical_resource(url)
