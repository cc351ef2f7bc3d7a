"""Fuzz target: the authorization layer (``ResourceServer``) in front of Streamable HTTP and
the legacy HTTP+SSE endpoint (``with_legacy_sse``), in process: a ``JWTVerifier`` whose JWKS
is this process's own keys (no network), DPoP on.

An input is a request (``asgi.parse``; default path ``/mcp``): random header sets
(``Authorization``, ``DPoP``, ``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``x-mcp-header``
values, ``Origin``/``Host``) and a body. Placeholders are replaced before it is sent:
``{alice}``, ``{bob}`` (valid bearer tokens; bob also has ``mcp:admin``), ``{carol}`` (a valid
DPoP-bound token), ``{proof}`` (a fresh DPoP proof of carol's key for this request),
``{stale-proof}``, ``{expired}``, ``{other-aud}``, ``{other-iss}``, ``{unknown-key}``,
``{none-alg}``, ``{session}`` (alice's session), ``{legacy-session}`` (alice's legacy
HTTP+SSE session), ``{alice-task}`` (a task of alice's).
A body alone is sent with alice's token.

Invariants: nothing raises, no 5xx but 503; a 401 carries ``WWW-Authenticate``; no request
without a valid credential (one ``Authorization`` header naming a valid token with its
scheme, and for carol's the fresh proof) ever gets a 2xx (but the metadata document) or
reaches a handler; a handler sees the principal of the request's token, and the
``mcp:admin`` tool runs only for bob; no answer to anyone but alice holds alice's task secret.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from mcpbind import Context, Server
from mcpbind.auth.server import JWTVerifier, ResourceServer
from mcpbind.http import StreamableHTTPApp, with_legacy_sse
from mcpbind.server.tasks import TaskContext, Tasks

from . import asgi
from .checks import Finding, check_message, request_ids
from .legacy import LegacyStream

__all__ = ["AuthTarget"]

ISSUER = "https://auth.example.com"
ORIGIN = "http://127.0.0.1:8000"
RESOURCE = ORIGIN + "/mcp"
STATELESS = "2026-07-28"
_DEFAULTS = [
    ("host", "127.0.0.1:8000"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]
_PUBLIC = frozenset({"GET", "HEAD", "OPTIONS"})  # the metadata document is for anyone


class InProcessJWKS(JWTVerifier):
    """A ``JWTVerifier`` whose key set is given, not fetched (the fuzz loop has no network)."""

    def __init__(self, keys: KeySet) -> None:
        super().__init__("https://auth.example.com/jwks", issuer=ISSUER)
        self.keys = keys

    async def _fetch(self) -> KeySet:
        return self.keys


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class AuthTarget:
    def __init__(self, run: Any) -> None:
        self._run = run
        self.key = ECKey.generate_key("P-256", parameters={"kid": "k1", "use": "sig"})
        self.stranger = ECKey.generate_key("P-256", parameters={"kid": "k1", "use": "sig"})
        self.dpop_key = ECKey.generate_key("P-256")
        self.calls: list[str] = []
        self.admin_calls: list[str] = []
        self.secret = secrets.token_hex(16)  # in alice's task result only
        verifier = InProcessJWKS(KeySet.import_key_set({"keys": [self.key.as_dict(private=False)]}))
        self.auth = ResourceServer(
            verifier,
            resource=RESOURCE,
            authorization_servers=[ISSUER],
            scopes_supported=["mcp:read"],
        )
        self.server = self._server()
        self.streamable = StreamableHTTPApp(
            self.server, auth=self.auth, json_response=True, path="/mcp"
        )
        self.app = with_legacy_sse(self.streamable)
        jkt = self.dpop_key.thumbprint()
        self.valid = {  # token -> (subject, scheme, scopes)
            self._token(sub="alice"): ("alice", "bearer"),
            self._token(sub="bob", scope="mcp:read mcp:admin"): ("bob", "bearer"),
            self._token(sub="carol", cnf={"jkt": jkt}): ("carol", "dpop"),
        }
        names = ["alice", "bob", "carol"]
        self.tokens = dict(zip(names, self.valid, strict=True))
        now = int(time.time())
        self.tokens |= {
            "expired": self._token(sub="alice", exp=now - 3600, iat=now - 7200),
            "other-aud": self._token(sub="alice", aud="https://other.example.com/mcp"),
            "other-iss": self._token(sub="alice", iss="https://evil.example.com"),
            "unknown-key": self._token(sub="alice", key=self.stranger),
            "none-alg": ".".join(
                [
                    _b64(b'{"alg":"none","typ":"at+jwt"}'),
                    _b64(json.dumps({"iss": ISSUER, "aud": RESOURCE, "sub": "alice"}).encode()),
                    "",
                ]
            ),
        }
        self.session = self._run(self._open_session())
        self.alice_task = self._run(self._alice_task())
        self.legacy: LegacyStream | None = None

    def close(self) -> None:
        if self.legacy is not None:
            self._run(self.legacy.close())
        self._run(self.app.aclose())
        self._run(self.tasks.aclose())

    # -- set-up -------------------------------------------------------------------------------
    def _server(self) -> Server:
        server = Server("fuzz-auth", version="1.0.0")
        self.tasks = Tasks(server)
        calls, admin_calls, secret = self.calls, self.admin_calls, self.secret

        @server.tool()
        def whoami(ctx: Context) -> str:
            who = ctx.principal.subject if ctx.principal is not None else "nobody"
            calls.append(who)
            return who

        @server.tool(scopes=["mcp:admin"])
        def admin(ctx: Context) -> str:
            who = ctx.principal.subject if ctx.principal is not None else "nobody"
            admin_calls.append(who)
            return "done"

        @server.tool(task="optional")
        async def vault(ctx: Context, task: TaskContext) -> str:
            who = ctx.principal.subject if ctx.principal is not None else "nobody"
            return f"{who}:{secret}" if who == "alice" else who

        @server.resource("test://hello", mime_type="text/plain", scopes=["mcp:read"])
        def hello() -> str:
            return "hello"

        return server

    def _token(self, key: ECKey | None = None, **claims: Any) -> str:
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "client_id": "app",
            "scope": "mcp:read",
            "iat": now,
            "exp": now + 365 * 86400,  # valid for the whole run
        }
        body.update(claims)
        signer = key or self.key
        return jwt.encode({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}, body, signer)

    def proof(self, method: str, url: str, token: str, iat: int | None = None) -> str:
        claims = {
            "htm": method,
            "htu": url,
            "iat": int(time.time()) if iat is None else iat,
            "jti": secrets.token_hex(8),
            "ath": _b64(hashlib.sha256(token.encode()).digest()),
        }
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.dpop_key.as_dict(private=False)}
        return jwt.encode(header, claims, self.dpop_key)

    async def _open_session(self) -> str:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            },
        }
        auth = ("authorization", f"Bearer {self.tokens['alice']}")
        reply = await asgi.call(
            self.app,
            asgi.Request("POST", "/mcp", b"", [*_DEFAULTS, auth], json.dumps(init).encode()),
        )
        if reply.status != 200:
            raise RuntimeError(f"initialize failed: {reply.status} {reply.body!r}")
        session = reply.headers["mcp-session-id"]
        done = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        headers = [*_DEFAULTS, auth, ("mcp-session-id", session)]
        await asgi.call(self.app, asgi.Request("POST", "/mcp", b"", headers, done))
        return session

    async def _alice_task(self) -> str:
        meta = {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "vault", "arguments": {}, "task": {}, "_meta": meta},
        }
        headers = [
            *_DEFAULTS,
            ("authorization", f"Bearer {self.tokens['alice']}"),
            ("mcp-protocol-version", STATELESS),
            ("mcp-method", "tools/call"),
            ("mcp-name", "vault"),
        ]
        reply = await asgi.call(
            self.app, asgi.Request("POST", "/mcp", b"", headers, json.dumps(call).encode())
        )
        task_id = json.loads(reply.body).get("result", {}).get("taskId")
        if reply.status != 200 or not isinstance(task_id, str):
            raise RuntimeError(f"task creation failed: {reply.status} {reply.body!r}")
        return task_id

    # -- one input ----------------------------------------------------------------------------
    def __call__(self, data: bytes) -> None:
        self._run(self._one(data))

    def _fill(self, text: bytes, request: asgi.Request) -> bytes:
        if b"{" not in text:
            return text
        carol = self.tokens["carol"]
        values = {
            **self.tokens,
            "session": self.session,
            "legacy-session": self.legacy.session_id if self.legacy is not None else "",
            "alice-task": self.alice_task,
            "proof": self.proof(request.method, ORIGIN + request.path, carol),
            "stale-proof": self.proof(
                request.method, ORIGIN + request.path, carol, int(time.time()) - 7200
            ),
        }
        for name, value in values.items():
            text = text.replace(b"{%s}" % name.encode(), value.encode())
        return text

    async def _one(self, data: bytes) -> None:
        if self.session not in self.streamable.sessions:  # an input ended it (DELETE)
            self.session = await self._open_session()
        if self.legacy is None or self.legacy.task.done():
            alice = [("authorization", f"Bearer {self.tokens['alice']}")]
            self.legacy = await LegacyStream(self.app, alice).open()
        self.legacy.seen.clear()
        request, named = asgi.parse(data, path="/mcp")
        if named:
            given = {k for k, _ in request.headers}
            request.headers = [h for h in _DEFAULTS if h[0] not in given] + request.headers
        else:
            request.headers = [*_DEFAULTS, ("authorization", "Bearer {alice}")]
        fill = lambda v: self._fill(v.encode("utf-8", "surrogateescape"), request)  # noqa: E731
        request.headers = [
            (k, fill(v).decode("utf-8", "surrogateescape")) for k, v in request.headers
        ]
        request.body = self._fill(request.body, request)
        request.query = self._fill(request.query, request)
        subject = self._valid_subject(request)
        calls, admin_calls = len(self.calls), len(self.admin_calls)
        reply = await asgi.call(self.app, request)
        self._check(request, reply, subject)
        if reply.status == 202 and request.path == self.legacy.path:
            for wanted in request_ids(request.body):  # its handlers ran: answered on the stream
                await self.legacy.wait_for(wanted)
        ran = self.calls[calls:] + self.admin_calls[admin_calls:]
        where = f"auth {request.method} {request.path} (valid principal: {subject})"
        if ran and subject is None:
            raise Finding(f"{where}: a handler ran without a valid credential: {ran}")
        if any(who != subject for who in ran):
            raise Finding(f"{where}: a handler saw another principal: {ran}")
        if self.admin_calls[admin_calls:] and subject != "bob":
            raise Finding(f"{where}: the mcp:admin tool ran for {subject}")
        if subject != "alice" and self.secret.encode() in reply.body:
            raise Finding(f"{where}: alice's task result reached {subject}: {reply.body[:300]!r}")

    def _valid_subject(self, request: asgi.Request) -> str | None:
        """The subject of the request's credential when it is valid, else ``None``."""
        found = request.values("authorization")
        if len(found) != 1:
            return None
        scheme, _, token = found[0].strip().partition(" ")
        known = self.valid.get(token.strip())
        if known is None or scheme.lower() != known[1]:
            return None
        if known[1] == "dpop":
            proofs = request.values("dpop")
            if len(proofs) != 1 or not _is_fresh_proof(proofs[0], request, self.dpop_key):
                return None
        return known[0]

    def _check(self, request: asgi.Request, reply: asgi.Reply, subject: str | None) -> None:
        where = f"auth {request.method} {request.path} -> {reply.status}"
        if reply.status >= 500 and reply.status != 503:
            raise Finding(f"{where}: {reply.body[:300]!r}")
        if reply.status == 401 and "www-authenticate" not in reply.headers:
            raise Finding(f"{where}: 401 without WWW-Authenticate")
        public = request.path == self.auth.metadata_path and request.method in _PUBLIC
        if 200 <= reply.status < 300 and subject is None and not public:
            raise Finding(f"{where}: served without a valid credential: {reply.body[:200]!r}")
        if reply.status >= 400 and reply.headers.get("content-type", "").startswith(
            "application/json"
        ):
            check_message(reply.body, where)


def _is_fresh_proof(proof: str, request: asgi.Request, key: ECKey) -> bool:
    """Whether ``proof`` is one the harness minted for this request (``{proof}``): signed by
    carol's key, for this method and path, issued within the last minute."""
    try:
        claims = jwt.decode(proof, key).claims
    except Exception:  # anything but a good proof is not one
        return False
    return (
        claims.get("htm") == request.method
        and claims.get("htu") == ORIGIN + request.path
        and isinstance(claims.get("iat"), int)
        and time.time() - claims["iat"] < 60
    )
