"""Helpers of the resource-server tests: signing keys, tokens signed with them, and a real
HTTP endpoint on 127.0.0.1 (a thread) that serves a JWKS or introspection answers and counts
the requests it gets."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cache
from http.server import BaseHTTPRequestHandler
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from support.live_server import HandlerServer

ISSUER = "https://auth.example.com"
RESOURCE = "http://127.0.0.1:8765/mcp"


class Endpoint:
    """One path answered with ``status`` and ``body()`` (JSON), the requests counted."""

    def __init__(self) -> None:
        self.status = 200
        self.body: Callable[[], Any] = dict
        self.padding = 0
        self.hits = 0
        self.requests: list[tuple[dict[str, str], bytes]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                endpoint.hits += 1
                endpoint.requests.append((dict(self.headers), self.rfile.read(length)))
                data = json.dumps(endpoint.body()).encode() + b" " * endpoint.padding
                self.send_response(endpoint.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HandlerServer(Handler).start()
        self.url = f"http://127.0.0.1:{self.server.port}/endpoint"

    def close(self) -> None:
        self.server.stop()


class Keys:
    """Signing keys of a test authorization server and their JWKS."""

    def __init__(self) -> None:
        self.current = ECKey.generate_key("P-256", parameters={"kid": "ec-1", "use": "sig"})
        self.rsa = _rsa_key()
        self.published = [self.current, self.rsa]

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) for k in self.published]}

    def sign(
        self,
        key: Any = None,
        alg: str = "ES256",
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A token: ``iss``, ``aud``, ``sub``, ``client_id``, ``scope``, ``exp`` defaults,
        overridden (or, with ``None``, left out) by ``claims``."""
        key = key or self.current
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": "alice",
            "client_id": "app",
            "scope": "mcp:read",
            "iat": now,
            "exp": now + 300,
        }
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        head = {"alg": alg, "kid": key.kid, "typ": "at+jwt", **(header or {})}
        return jwt.encode(head, body, key, algorithms=[alg])


@cache
def _rsa_key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "rsa-1", "use": "sig"})
