"""JOSE of the OAuth client (joserfc): DPoP proofs (RFC 9449 §4.2), client assertions
(RFC 7523 §2.2, private_key_jwt), and joserfc loaded only when used."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import time

from joserfc import jwt
from joserfc.jwk import ECKey

from mcpbind.auth.client.jose import DPoPKey, client_assertion, load_private_key


def test_dpop_proof_fields() -> None:
    key = DPoPKey()
    proof = key.proof("post", "https://rs.example/mcp?x=1#f", access_token="tok", nonce="n1")
    public = ECKey.import_key(jwt.decode(proof, key._key).header["jwk"])
    token = jwt.decode(proof, public)
    assert token.header["typ"] == "dpop+jwt" and token.header["alg"] == "ES256"
    assert "d" not in token.header["jwk"]  # public key only
    claims = token.claims
    assert claims["htm"] == "POST" and claims["htu"] == "https://rs.example/mcp"
    assert claims["nonce"] == "n1" and abs(claims["iat"] - time.time()) < 60
    digest = hashlib.sha256(b"tok").digest()
    assert claims["ath"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    again = jwt.decode(key.proof("POST", "https://rs.example/mcp"), public).claims
    assert again["jti"] != claims["jti"] and "ath" not in again  # fresh per request


def test_client_assertion_claims() -> None:
    pem = ECKey.generate_key("P-256").as_pem(private=True)
    key = load_private_key(pem, "ES256")
    claims = jwt.decode(client_assertion(key, "ES256", "cid", "https://as.example"), key).claims
    assert claims["iss"] == claims["sub"] == "cid" and claims["aud"] == "https://as.example"
    assert claims["exp"] > claims["iat"] and claims["jti"]


def test_joserfc_is_imported_lazily() -> None:
    code = (
        "import sys, mcpbind, mcpbind.protocol, mcpbind.auth.client, mcpbind.http.client;"
        "print('joserfc' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_dpop_key_is_kept_with_its_tokens(tmp_path: object) -> None:
    """RFC 9449 §6: a DPoP-bound token is usable only with its key, so the file store keeps
    the key (0600) and a second process signs with the same one."""
    import os

    from mcpbind.auth.client import FileTokenStore, Tokens

    key = DPoPKey()
    store = FileTokenStore(os.path.join(str(tmp_path), "t.json"))
    tokens = Tokens("ACCESS-SECRET", "DPoP", dpop_jwk=key.private_jwk())
    assert "ACCESS-SECRET" not in repr(tokens) and key.private_jwk()["d"] not in repr(tokens)
    store.save("https://as.example", "https://rs.example/mcp", tokens)
    loaded = store.load("https://as.example", "https://rs.example/mcp")
    assert loaded is not None and loaded.dpop_jwk is not None
    assert DPoPKey.from_jwk(loaded.dpop_jwk).thumbprint() == key.thumbprint()
