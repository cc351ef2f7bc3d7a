"""Serve 2026-07-28 requests: the server side of the stateless era.

A request is accepted and decoded by :class:`mcpbind.protocol.accept.StatelessMethodTable` (the same
step as every handshake-era request: method table, version, capabilities, typed params), then
:func:`run_request` runs the server's handler with a stateless context (MRTR instead of
server-to-client requests, basic/patterns/mrtr.mdx) and completes its result (``resultType``,
cache hints, the server's identity). On a connection (stdio, in-memory) both happen inside the
connection's own request machinery (``ServerSession``); for a request without a connection
(one HTTP POST), :func:`answer` does both and returns the encoded response with the error
code, if any, for transports that map codes to statuses (Streamable HTTP:
-32020/-32021/-32022/-32602 are 400, -32601 is 404).

The server's capabilities (as the era sees them) and identity are kept encoded per server and
rebuilt only when its registrations change (:func:`encoded`).

The 2025 sessionless HTTP mode (``StreamableHTTPApp(sessionless=True)``) is answered by the
same :func:`answer`, given the handshake-era version the POST names (``MCP-Protocol-Version``):
no ``_meta`` is needed, the request is accepted by the method table of that version under the
capabilities such a server can honour, and its handler runs with a context that reaches
nothing but this request's response (:mod:`mcpbind.server.sessionless_mode`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, decoder

from .._lazy import LazyModule, lazy_logger
from ..protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    SessionOptions,
    custom_method,
)
from ..protocol.accept import MethodTable, StatelessMethodTable, read_meta
from ..protocol.meta import SERVER_INFO, MalformedMeta, RequestMeta
from ..protocol.wire_view import WireParams
from ..runner import Answer, PlainReplies, Runner
from ..versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS
from .context import Context, current_request_headers
from .limits import server_inflight
from .mrtr import (
    MRTR_METHODS,
    Emit,
    EmitFor,
    InputRound,
    Outcome,
    StatelessPeer,
    run_with_inputs,
)
from .options import StatelessOptions, options_of
from .request_state import RoundState, StateCodec, binding_for, field_of
from .sessionless_mode import run_sessionless, sessionless_capabilities

if TYPE_CHECKING:
    from mcpbind_types.unified import methods as m

    from .app import Server
else:  # the method table (and the types) imported at the first use (issue 15)
    m = LazyModule("mcpbind_types.unified.methods", globals(), "m")

__all__ = [
    "CACHEABLE",
    "Encoded",
    "Posted",
    "Reply",
    "answer",
    "answer_status",
    "discover_result",
    "encoded",
    "handle_sessionless",
    "handle_stateless",
    "http_status",
    "run_request",
    "stateless_capabilities",
]

logger = lazy_logger("mcpbind.server")

CACHEABLE: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""server/utilities/caching.mdx, Cacheable Results."""


_EMPTY = b"{}"
_LISTEN = "subscriptions/listen"


_BAD_REQUEST: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


class Reply(msgspec.Struct, frozen=True):
    """The encoded response; for an error, its code and whether the request was malformed."""

    data: bytes
    error_code: int | None = None
    malformed: bool = False
    """The request lacked the required ``_meta`` fields (basic/index.mdx: HTTP 400)."""
    busy: bool = False
    """Refused at once: an in-flight bound is reached (HTTP 503)."""

    @property
    def http_status(self) -> int:
        """The Streamable HTTP status for this reply (:func:`http_status`)."""
        return http_status(self.error_code, self.malformed, self.busy)


def http_status(error_code: int | None, malformed: bool = False, busy: bool = False) -> int:
    """The Streamable HTTP status of an answer (basic/index.mdx §_meta, server-stateless):
    400 for malformed metadata and -32020/-32021/-32022, 404 for an unknown method, 503 when
    the server is busy."""
    if busy:
        return 503
    if malformed or error_code in _BAD_REQUEST:
        return 400
    return 404 if error_code == METHOD_NOT_FOUND else 200


def answer_status(out: Answer) -> int:
    """:func:`http_status` of what the runner made of a request."""
    error = out.error
    if error is None:
        return 200
    return http_status(error.code, isinstance(error, MalformedMeta), out.busy)


class Encoded:
    """One server's identity and 2026-07-28 capabilities, encoded once, and the era that
    accepts its requests (and, per version, the 2025 sessionless mode's method tables);
    rebuilt by :func:`encoded` when a registration changes them."""

    __slots__ = ("_sessionless", "capabilities", "era", "info", "key", "options")

    def __init__(self, server: Server, key: tuple[object, ...]) -> None:
        self.key = key
        self.options = options_of(server)
        caps = server.capabilities(stateless=True)
        self.capabilities = caps
        #: ``io.modelcontextprotocol/serverInfo``, encoded once (None: the server leaves it
        #: out; basic/index.mdx makes it a SHOULD for every result's ``_meta``).
        self.info: msgspec.Raw | None = (
            msgspec.Raw(msgspec.json.encode(server.info()))
            if self.options.server_info_in_meta
            else None
        )
        versions = self.options.versions
        table: dict[str, MethodInfo[Any, Any]] = dict(m.CLIENT_TO_SERVER)
        # A custom handler takes any JSON object; a listen request is checked by its hub
        # (extension filter keys included), so both keep their params as a plain object.
        for name in (*server.custom, _LISTEN):
            table[name] = custom_method(name, "client_to_server")
        self.era = StatelessMethodTable(
            table,
            tuple(v for v in versions if v in STATELESS_VERSIONS),
            tuple(versions),
            msgspec.to_builtins(caps),
            any(v in HANDSHAKE_VERSIONS for v in versions),
        )
        self._sessionless: dict[str, MethodTable] = {}

    def sessionless(self, server: Server, version: str) -> MethodTable:
        """What the 2025 sessionless mode accepts at ``version`` (built on first use)."""
        table = self._sessionless.get(version)
        if table is None:
            methods: dict[str, MethodInfo[Any, Any]] = dict(m.CLIENT_TO_SERVER)
            for name in server.custom:
                if name not in m.CLIENT_TO_SERVER:
                    methods[name] = custom_method(name, "client_to_server")
            caps = msgspec.to_builtins(sessionless_capabilities(server))
            table = self._sessionless[version] = MethodTable(methods, (version,), caps)
        return table


def encoded(server: Server) -> Encoded:
    """The server's :class:`Encoded`, rebuilt only when what it is made of changed (a first
    tool, resource or prompt, a custom handler, an extension, the identity or options)."""
    key = (
        server.handlers,  # rebuilt when a handler is registered
        bool(server.tools),
        bool(server.resources or server.templates),
        bool(server.prompts),
        len(server.extensions),
        server.name,
        server.version,
        server.title,
        server.stateless,
    )
    cached: Encoded | None = server.encoded_state
    if cached is None or cached.key != key:
        cached = server.encoded_state = Encoded(server, key)
    return cached


def stateless_capabilities(server: Server) -> t.ServerCapabilities:
    """The server's capabilities as a 2026-07-28 client sees them: the same as on the
    handshake era, ``listChanged`` and ``subscribe`` included, since their notifications
    travel on ``subscriptions/listen`` streams (basic/patterns/subscriptions.mdx); extensions
    (tasks) declare their 2026-07-28 form."""
    return encoded(server).capabilities


def discover_result(server: Server) -> t.DiscoverResult:
    """server/discover.mdx: supported versions, capabilities, identity, instructions."""
    opts = options_of(server)
    result = t.DiscoverResult(
        capabilities=stateless_capabilities(server), supported_versions=list(opts.versions)
    )
    if server.instructions is not None:
        result.instructions = server.instructions
    return result


class Posted(msgspec.Struct):
    """One request of a POST without a session, as the runner and its handler
    (:func:`handle_stateless`, :func:`handle_sessionless`) see it: a Struct, made in C once
    per request. ``emit``: where its notifications go (set by the transport once its
    response exists); ``principal``: the authenticated caller (2026-07-28: bound into
    ``requestState``); ``version`` and ``options``: the 2025 sessionless mode's (``version``
    ``None``: an ``initialize``); ``headers``: those of the HTTP request that carried it
    (``Context.headers``; ``None``: the ``current_request_headers`` of the caller's task)."""

    id: int | str
    method: str
    raw: msgspec.Raw | bytes
    emit: Emit | None = None
    principal: str | None = None
    version: str | None = None
    options: SessionOptions | None = None
    headers: Mapping[str, str] | None = None


def plain_replies(server: Server, options: SessionOptions | None = None) -> PlainReplies:
    """How the answers of ``server``'s requests without a session are encoded; exception text
    goes to the client when ``Server.debug`` or ``options.debug`` is set."""
    return PlainReplies(lambda: server.debug or (options is not None and options.debug))


def post_runner(server: Server, options: SessionOptions | None = None) -> Runner:
    """A runner for ``server``'s requests without a session, under the server's shared bound
    (an HTTP endpoint keeps one; :func:`answer` makes one when given none)."""
    return Runner(plain_replies(server, options), _no_handler, shared=server_inflight(server))


async def _no_handler(request: Any) -> Any:  # pragma: no cover - answer() always gives one
    raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")


async def answer(
    server: Server,
    request_id: int | str,
    method: str,
    raw_params: msgspec.Raw | bytes | None,
    *,
    emit: Emit | None = None,
    principal: str | None = None,
    sessionless: bool = False,
    version: str | None = None,
    options: SessionOptions | None = None,
    runner: Runner | None = None,
    key: object = None,
    reserved: bool = False,
) -> Reply | None:
    """Answer one request that came without a session (an HTTP POST); never raises for bad
    input (it becomes the error reply).

    It is run by ``runner`` (an HTTP endpoint's: its in-flight table and the server's shared
    bound; by default one made for it) under ``key`` (``runner.cancel(key)`` cancels it: then
    ``None`` is returned and nothing is to be sent); ``reserved``: its slot of the shared
    bound was taken with ``Runner.reserve``.
    ``emit`` receives request-scoped notifications (progress; log messages when the request
    set a log level) as encoded JSON-RPC messages. ``principal`` (the authenticated caller,
    if any) is bound into ``requestState`` so another caller cannot replay it.
    ``sessionless``: a request of the 2025 sessionless HTTP mode, answered without ``_meta``
    at the handshake-era ``version`` its POST names (``None``: it is an ``initialize``), with
    ``options``' limits.
    """
    if runner is None:
        runner = post_runner(server, options)
    request = Posted(request_id, method, raw_params or _EMPTY, emit, principal, version, options)
    handler = functools.partial(handle_sessionless if sessionless else handle_stateless, server)
    out = await runner.run_here(request, handler, key=key, reserved=reserved)
    if out.data is None:
        return None
    error = out.error
    if error is None:
        return Reply(out.data)
    return Reply(out.data, error.code, isinstance(error, MalformedMeta), out.busy)


async def handle_stateless(server: Server, request: Posted) -> Any:
    """Accept and run one 2026-07-28 request (its ``_meta`` checked by the era): the handler
    a runner is given for it (exception text goes to the client when ``Server.debug`` or
    the request's ``options.debug`` is set)."""
    enc = encoded(server)
    era = enc.era
    raw = request.raw
    method = request.method
    decoded = era.decode(method, raw)
    if decoded is None:  # no version in _meta: malformed, unless the method is unknown
        era.accept(method)
        era.request_meta(read_meta(raw))
        raise MalformedMeta("Invalid params: _meta with the protocol fields is required")
    options = request.options
    return await run_request(
        server,
        request.id,
        method,
        decoded[1],
        decoded[2],
        request.emit,
        request.principal,
        enc,
        debug=options is not None and options.debug,
        headers=request.headers,
    )


async def handle_sessionless(server: Server, request: Posted) -> Any:
    """Accept and run one request of the 2025 sessionless mode at ``request.version``: the
    handler a runner is given for it."""
    version = request.version
    table = encoded(server).sessionless(server, version or HANDSHAKE_VERSIONS[0])
    return await run_sessionless(
        server,
        table,
        request.id,
        request.method,
        request.raw,
        version is None,
        request.emit,
        request.options or _DEFAULTS,
        request.headers,
    )


_DEFAULTS = SessionOptions()


async def run_request(
    server: Server,
    request_id: int | str,
    method: str,
    params: Any,
    meta: RequestMeta,
    emit: Emit | None = None,
    principal: str | None = None,
    enc: Encoded | None = None,
    emit_for: EmitFor | None = None,
    *,
    debug: bool = False,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """Run the handler of one accepted 2026-07-28 request; its completed result, or the
    :class:`McpError` the client gets raised. ``emit``: where the request's notifications go;
    ``emit_for``: instead, a connection's sender for all its requests, bound to this one only
    if its handler can notify. ``enc``: the server's :class:`Encoded` when the caller keeps it
    current (a connection), else looked up. ``debug``: exception text goes to the client
    (also when ``Server.debug`` is set). ``headers``: the HTTP request's, for
    ``Context.headers`` (``None``: those the caller's task set, if any)."""
    if enc is None:
        enc = encoded(server)
    if headers is None:
        headers = current_request_headers.get()
    if method == "server/discover":
        return _complete(discover_result(server), method, enc, enc.options)
    custom = server.custom.get(method)
    handler = server.handlers.get(method)  # custom ones too, inside the server's middleware
    if handler is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
    try:
        if isinstance(params, WireParams):  # the usual request, its _meta known (wire_view)
            view: Any = params  # with its params type's fields (tools/call's, here)
            if (
                method == "tools/call"
                and custom is None
                and server.own_tool_calls
                and not isinstance(view.request_state, str)
                and (
                    (entry := server.tools.get(view.name) or server.mounted_tool(view.name))
                    is not None
                )
                and not entry.signature.skipped
                and (
                    view.arguments is msgspec.UNSET or memoryview(view.arguments)[0] == _OPEN_BRACE
                )
            ):
                # The server's own tools/call reads the view (no requestState, arguments an
                # object or absent: the others are refused by the real params type, after
                # materialize), and its tool has no context parameter (it cannot ask):
                # nothing it runs reaches the context's peer or _meta. So does a mounted
                # server's, through mounts that answer tools/call themselves (mounted_tool).
                ctx = Context(
                    peer=_UNREACHED,
                    protocol_version=meta.protocol_version,
                    request_id=request_id,
                    progress_token=meta.progress_token,
                    meta=meta.raw,
                    debug_errors=debug or server.debug,
                    headers=headers,
                )
                return _complete(await handler(params, ctx), method, enc, enc.options)
            if method not in server.wire_views or not _view_fits(view):
                params = params.materialize()
        if emit is None and emit_for is not None:
            emit = functools.partial(emit_for, request_id)
        mrtr = method in MRTR_METHODS
        if (
            mrtr
            and custom is None
            and method in server.explicit_rounds
            and not isinstance(field_of(params, "request_state", "requestState"), str)
        ):
            # The first call to a handler that makes its own rounds (Server.wrap with
            # explicit_rounds, e.g. the Host's gateway): no state to open and no round to run,
            # only its own InputRequiredResult to seal (as _answer_mrtr would, on round 1),
            # whatever function it may reach (it replaces the method's handler).
            peer = StatelessPeer(meta.client_capabilities, meta.log_level, emit, None, method)
            ctx = _context(peer, meta, request_id, debug or server.debug, server, headers)
            result = await handler(params, ctx)
            if _is_input_required(result):
                return _sealed_own(result, server, enc, method, params, principal, 1)
            return _complete(result, method, enc, enc.options)
        # No requestState and no way to ask: no round, no state, no runner task.
        unasking = mrtr and custom is None and _cannot_ask(server, params)
        if not mrtr or (unasking and not isinstance(params.request_state, str)):
            peer = StatelessPeer(meta.client_capabilities, meta.log_level, emit, None, method)
            ctx = _context(peer, meta, request_id, debug or server.debug, server, headers)
            return _complete(await handler(params, ctx), method, enc, enc.options)
        return await _answer_mrtr(
            server,
            enc,
            method,
            params,
            meta,
            request_id,
            emit,
            handler,
            principal,
            debug,
            headers,
            unasking,
        )
    except McpError as exc:
        if method == "resources/read" and exc.code == RESOURCE_NOT_FOUND:
            # server/resources.mdx (2026-07-28): not found is -32602 now.
            raise McpError(INVALID_PARAMS, exc.message, exc.data) from None
        raise


_UNREACHED: Final = StatelessPeer({}, None, None, None, "tools/call")
"""The context peer of a tool call whose tool takes no context (nothing can reach it)."""


async def _answer_mrtr(
    server: Server,
    enc: Encoded,
    method: str,
    params: Any,
    meta: RequestMeta,
    request_id: int | str,
    emit: Emit | None,
    handler: Any,
    principal: str | None,
    debug: bool,
    headers: Mapping[str, str] | None,
    unasking: bool = False,
) -> Any:
    """``unasking``: the call reaches a registered function without a context parameter
    (:func:`_cannot_ask`, as :func:`run_request` found it)."""
    state_token = field_of(params, "request_state", "requestState")
    opts = enc.options
    request_params = params
    previous: RoundState | None = None
    if isinstance(state_token, str):
        previous = _codec(server, opts).open(
            state_token, binding_for(method, request_params, principal)
        )
        if previous.rounds >= opts.max_rounds:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {method} still needs input after {previous.rounds} rounds; giving up",
            )
    responses: dict[str, msgspec.Raw] = dict(previous.responses) if previous else {}
    fresh = field_of(params, "input_responses", "inputResponses")
    if isinstance(fresh, dict):
        asked = set(previous.asked) if previous is not None else None
        for key, value in fresh.items():
            # mrtr.mdx, Error Handling: ignore what was not asked for.
            if asked is None or key in asked:
                responses[key] = msgspec.Raw(msgspec.json.encode(value))
    if previous is not None:
        # The handler sees only state it minted itself (explicit MRTR), never ours.
        params = _with_state(params, previous.app)
    explicit = method in server.explicit_rounds  # the handler makes its own rounds
    round_ = InputRound(responses, meta.client_capabilities)
    peer = StatelessPeer(
        meta.client_capabilities, meta.log_level, emit, None if explicit else round_, method
    )
    ctx = _context(peer, meta, request_id, debug or server.debug, server, headers)
    custom = server.custom.get(method)
    if unasking or (custom is not None and handler is not custom and _cannot_ask(server, params)):
        # A function without a context parameter has no way to ask: no runner task needed.
        return _complete(await handler(params, ctx), method, enc, opts)
    if explicit:  # nothing asks through the context: no runner task either
        outcome = Outcome(await handler(params, ctx))
    else:
        outcome = await run_with_inputs(lambda: handler(params, ctx), round_)
    rounds = previous.rounds + 1 if previous is not None else 1
    if outcome.asked is None:
        result = outcome.result
        if not _is_input_required(result):
            return _complete(result, method, enc, opts)
        return _sealed_own(result, server, enc, method, request_params, principal, rounds)
    binding = binding_for(method, request_params, principal)
    state = RoundState(binding, 0, rounds, sorted(outcome.asked), dict(round_.consumed))
    result = t.InputRequiredResult(
        input_requests=_input_requests(outcome.asked),
        request_state=_codec(server, opts).seal(state),
        result_type="input_required",
    )
    if enc.info is not None:
        result.meta = {SERVER_INFO: enc.info}
    return result


def _codec(server: Server, opts: StatelessOptions) -> StateCodec:
    """The server's state codec: made when a state is opened or sealed (most calls never)."""
    return StateCodec(
        opts.secret,
        opts.state_ttl,
        previous=opts.previous_secrets,
        audience=server.name if opts.audience is None else opts.audience,
    )


def _sealed_own(
    result: Any,
    server: Server,
    enc: Encoded,
    method: str,
    request_params: Any,
    principal: str | None,
    rounds: int,
) -> Any:
    """An ``InputRequiredResult`` the handler built itself (explicit rounds), its own
    ``requestState`` sealed inside the server's (round ``rounds`` of the request)."""
    own = field_of(result, "request_state", "requestState")
    asked = field_of(result, "input_requests", "inputRequests")
    keys = sorted(asked) if isinstance(asked, dict) else []
    binding = binding_for(method, request_params, principal)
    state = RoundState(binding, 0, rounds, keys, {}, own if isinstance(own, str) else None)
    sealed = _codec(server, enc.options).seal(state)
    if isinstance(result, t.InputRequiredResult):
        result = msgspec.structs.replace(result, request_state=sealed)
    else:
        result = {**result, "requestState": sealed}
    return _stamp_identity(result, enc.info)


_OPEN_BRACE: Final = ord("{")


def _view_fits(view: Any) -> bool:
    """Whether a wire view passes its params type's own check too (``__post_init__``, which a
    view has not): of the request params types only tools/call's has one, ``arguments`` an
    object (tests/stateless/test_wire_views.py keeps it so). One that fails is materialized,
    which refuses it as the params type does."""
    arguments = getattr(view, "arguments", msgspec.UNSET)
    return type(arguments) is not msgspec.Raw or memoryview(arguments)[0] == _OPEN_BRACE


def _cannot_ask(server: Server, params: Any) -> bool:
    """Whether this call of a registered tool or prompt (not a low-level handler) reaches a
    function without a context parameter: it has no way to ask for input."""
    kind = type(params)
    if kind is t.CallToolRequestParams:
        return _unasking(server.tools.get(params.name) or server.mounted_tool(params.name))
    if kind is t.GetPromptRequestParams:
        return _unasking(server.prompts.get(params.name))
    return False  # resources/read: the matching template is only known inside


def _unasking(entry: Any) -> bool:
    """A registered function without a context parameter (``None``: none registered)."""
    return entry is not None and not entry.signature.skipped


def _with_state(params: Any, state: str | None) -> Any:
    if isinstance(params, dict):
        rest = {k: v for k, v in params.items() if k != "requestState"}
        return rest if state is None else {**rest, "requestState": state}
    return msgspec.structs.replace(params, request_state=msgspec.UNSET if state is None else state)


def _input_requests(asked: dict[str, dict[str, Any]]) -> Any:
    return decoder(dict[str, t.InputRequest]).decode(msgspec.json.encode(asked))


def _context(
    peer: StatelessPeer,
    meta: RequestMeta,
    request_id: int | str,
    debug: bool,
    server: Server,
    headers: Mapping[str, str] | None,
) -> Context:
    return Context(
        peer=peer,
        protocol_version=meta.protocol_version,
        request_id=request_id,
        progress_token=meta.progress_token,
        meta=dict(meta.raw),  # the handler's own (wire_view: raw may be shared)
        debug_errors=debug,
        lifespan_state=server.lifespan_state,
        headers=headers,
    )


def _complete(result: Any, method: str, enc: Encoded, opts: StatelessOptions) -> Any:
    """Stamp ``resultType``, the server's identity and (where cacheable) cache hints."""
    info = enc.info
    kind = type(result)
    stamps = _STAMPS.get(kind)
    if stamps is None:
        stamps = _STAMPS[kind] = _stamps_of(kind)
    if stamps is _USUAL:  # has _meta, no cache hints, not input_required
        if info is None:
            return msgspec.structs.replace(result, result_type="complete")
        identified = _identified(result.meta, info)
        return msgspec.structs.replace(result, result_type="complete", meta=identified)
    if stamps is not _NOT_A_RESULT:
        if stamps.input_required:
            raise _no_input_required(method)
        meta: Any = msgspec.UNSET
        if info is not None and stamps.meta:
            meta = _identified(result.meta, info)
        if stamps.cache_hints and method in CACHEABLE:
            hint = opts.hint(method)
            updates: dict[str, Any] = {
                "result_type": "complete",
                "ttl_ms": hint.ttl_ms,
                # A result its handler made private (a listing filtered per caller) stays so.
                "cache_scope": "private" if result.cache_scope == "private" else hint.scope,
            }
            if meta is not msgspec.UNSET:
                updates["meta"] = meta
            return msgspec.structs.replace(result, **updates)
        if meta is msgspec.UNSET:
            return msgspec.structs.replace(result, result_type="complete")
        return msgspec.structs.replace(result, result_type="complete", meta=meta)
    if _is_input_required(result):
        raise _no_input_required(method)
    if type(result) is dict and result.get("resultType") == "task":
        return _stamp_identity(result, info)  # tasks extension: a CreateTaskResult
    # A dict is sent as it is (it may hold pre-encoded msgspec.Raw values, e.g. a task's result).
    value = (
        {} if result is None else result if type(result) is dict else msgspec.to_builtins(result)
    )
    if not isinstance(value, dict):
        return result  # a custom method's non-object result: nothing to stamp
    value = {**value, "resultType": "complete"}
    if method in CACHEABLE:
        hint = opts.hint(method)
        value["ttlMs"] = hint.ttl_ms
        value["cacheScope"] = "private" if value.get("cacheScope") == "private" else hint.scope
    if info is not None:
        value["_meta"] = {**(value.get("_meta") or {}), SERVER_INFO: info}
    return value


def _identified(current: Any, info: Any) -> dict[str, Any]:
    """A result's ``_meta`` with the server's identity added."""
    if current is msgspec.UNSET or current is None:
        return {SERVER_INFO: info}
    return {**current, SERVER_INFO: info}


class _Stamps(NamedTuple):
    """What :func:`_complete` sets on a result Struct type with a ``result_type`` field."""

    meta: bool
    cache_hints: bool
    input_required: bool
    """An ``InputRequiredResult``: never a complete result."""


_NOT_A_RESULT: Final = _Stamps(False, False, False)
"""Not a Struct with ``result_type``: stamped as a plain object, if at all."""

_USUAL: Final = _Stamps(True, False, False)
"""A result Struct with ``_meta`` and ``resultType`` only (most of them: tools/call's)."""

_STAMPS: dict[type, _Stamps] = {}
"""Per result type, what it takes (found once per type)."""


def _stamps_of(kind: type) -> _Stamps:
    fields = getattr(kind, "__struct_fields__", None)
    if fields is None or "result_type" not in fields:
        return _NOT_A_RESULT
    stamps = _Stamps("meta" in fields, "ttl_ms" in fields, issubclass(kind, t.InputRequiredResult))
    return _USUAL if stamps == _USUAL else stamps


def _no_input_required(method: str) -> McpError:
    # mrtr.mdx, Supported Requests: never on other requests.
    return McpError(INTERNAL_ERROR, f"{method} cannot answer input_required")


def _is_input_required(result: Any) -> bool:
    if isinstance(result, t.InputRequiredResult):
        return True
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _stamp_identity(result: Any, info: msgspec.Raw | None) -> Any:
    if info is None:
        return result
    if isinstance(result, t.InputRequiredResult):
        base = {} if not isinstance(result.meta, dict) else result.meta
        return msgspec.structs.replace(
            result, result_type="input_required", meta={**base, SERVER_INFO: info}
        )
    return {**result, "_meta": {**(result.get("_meta") or {}), SERVER_INFO: info}}
