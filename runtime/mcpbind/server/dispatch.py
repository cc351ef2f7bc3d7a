"""Answer one 2026-07-28 request, independent of any session: the seam every transport calls.

``answer(server, request_id, method, raw_params, emit=...)`` checks the per-request ``_meta``
(basic/index.mdx), the version (basic/versioning.mdx), runs the server's handler with a
stateless context (MRTR instead of server-to-client requests, basic/patterns/mrtr.mdx) and
returns the encoded JSON-RPC response plus the error code, if any, for transports that map
codes to statuses (Streamable HTTP: -32020/-32021/-32022/-32602 are 400, -32601 is 404).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import MethodInfo, decoder
from mcpbind_types.unified.methods import CLIENT_TO_SERVER

from .._asyncio import is_cancellation
from ..protocol import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
    error_for_exception,
    has_capability,
)
from ..protocol._wire import encode_error, encode_result
from ..protocol.depth import DEFAULT_MAX_META_BYTES, meta_too_large
from .context import Context
from ..versions import STATELESS_VERSIONS
from ..protocol.meta import SERVER_INFO, MalformedMeta, RequestMeta, parse_request_meta
from .mrtr import MRTR_METHODS, InputRound, StatelessPeer, run_with_inputs
from .options import StatelessOptions, options_of
from .request_state import RoundState, StateCodec, binding_for, field_of

if TYPE_CHECKING:
    from .app import Server

__all__ = ["CACHEABLE", "Reply", "answer", "discover_result", "stateless_capabilities"]

logger = logging.getLogger("mcpbind.stateless")

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

Emit = Callable[[bytes], Awaitable[None]]


class _MetaOnly(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")


_META_DECODER = msgspec.json.Decoder(_MetaOnly)
_EMPTY = b"{}"


_BAD_REQUEST: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


@dataclass(frozen=True, slots=True)
class Reply:
    """The encoded response; for an error, its code and whether the request was malformed."""

    data: bytes
    error_code: int | None = None
    malformed: bool = False
    """The request lacked the required ``_meta`` fields (basic/index.mdx: HTTP 400)."""

    @property
    def http_status(self) -> int:
        """The Streamable HTTP status for this reply (basic/index.mdx §_meta, server-stateless):
        400 for malformed metadata and -32020/-32021/-32022, 404 for an unknown method."""
        if self.malformed or self.error_code in _BAD_REQUEST:
            return 400
        return 404 if self.error_code == METHOD_NOT_FOUND else 200


def stateless_capabilities(server: Server) -> t.ServerCapabilities:
    """The server's capabilities as a 2026-07-28 client sees them: the same as on the
    handshake era, ``listChanged`` and ``subscribe`` included, since their notifications
    travel on ``subscriptions/listen`` streams (basic/patterns/subscriptions.mdx); extensions
    (tasks) declare their 2026-07-28 form."""
    return server.capabilities(stateless=True)


def discover_result(server: Server) -> t.DiscoverResult:
    """server/discover.mdx: supported versions, capabilities, identity, instructions."""
    opts = options_of(server)
    result = t.DiscoverResult(
        capabilities=stateless_capabilities(server), supported_versions=list(opts.versions)
    )
    if server.instructions is not None:
        result.instructions = server.instructions
    return result


def _lookup(server: Server, method: str) -> MethodInfo[Any, Any] | None:
    info = CLIENT_TO_SERVER.get(method)
    if info is not None and info.kind == "request" and STATELESS_VERSIONS[0] in info.versions:
        return info
    return None


async def answer(
    server: Server,
    request_id: int | str,
    method: str,
    raw_params: msgspec.Raw | bytes | None,
    *,
    emit: Emit | None = None,
    principal: str | None = None,
) -> Reply:
    """Answer one stateless request; never raises for bad input (it becomes the error reply).

    ``emit`` receives request-scoped notifications (progress; log messages when the request
    set a log level) as encoded JSON-RPC messages. ``principal`` (the authenticated caller,
    if any) is bound into ``requestState`` so another caller cannot replay it.
    Cancellation is the caller's: cancel the task awaiting this and send nothing further.
    """
    try:
        result = await _answer(server, request_id, method, raw_params or _EMPTY, emit, principal)
    except McpError as exc:
        if method == "resources/read" and exc.code == RESOURCE_NOT_FOUND:
            # server/resources.mdx (2026-07-28): not found is -32602 now.
            exc = McpError(INVALID_PARAMS, exc.message, exc.data)
        return Reply(_encode_error(request_id, exc), exc.code, isinstance(exc, MalformedMeta))
    except BaseException as exc:  # SystemExit from a handler fails its request, not us
        if is_cancellation(exc):
            raise
        logger.exception("handler for %s failed", method)
        error = error_for_exception(exc)
        return Reply(encode_error(request_id, error), error.code)
    try:
        return Reply(encode_result(request_id, result))
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        logger.error("result of %s could not be encoded: %s", method, exc)
        error = error_for_exception(exc)
        return Reply(encode_error(request_id, error), error.code)


def _encode_error(request_id: int | str, error: McpError) -> bytes:
    """The error reply; ``data`` that cannot be encoded is left out (code and message still
    reach the client, as on the handshake era) instead of leaving the request unanswered."""
    try:
        return encode_error(request_id, error)
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        logger.error("data of error %s could not be encoded, sent without it: %s", error.code, exc)
        return encode_error(request_id, McpError(error.code, error.message))


async def _answer(
    server: Server,
    request_id: int | str,
    method: str,
    raw: msgspec.Raw | bytes,
    emit: Emit | None,
    principal: str | None,
) -> Any:
    opts = options_of(server)
    info = _lookup(server, method)
    custom = server.custom.get(method)
    if info is None and custom is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
    if meta_too_large(raw):
        raise McpError(
            INVALID_PARAMS, f"Invalid params: _meta exceeds {DEFAULT_MAX_META_BYTES} bytes"
        )
    try:
        meta_value = _META_DECODER.decode(raw).meta
    except msgspec.ValidationError:
        raise McpError(INVALID_PARAMS, "Invalid params: params must be an object") from None
    except msgspec.DecodeError as exc:
        raise McpError(PARSE_ERROR, f"Parse error: {exc}") from None
    meta = parse_request_meta(meta_value)
    _check_version(meta, opts)
    if (
        info is not None
        and custom is None
        and info.capability_owner == "server"
        and info.capability is not None
        and not has_capability(msgspec.to_builtins(stateless_capabilities(server)), info.capability)
    ):
        cap = ".".join(info.capability)
        raise McpError(
            METHOD_NOT_FOUND, f"Method not found: {method} (capability {cap!r} not declared)"
        )
    params_type = info.params_type if info is not None and custom is None else dict[str, Any]
    try:
        params = decoder(params_type).decode(raw)
    except msgspec.ValidationError as exc:
        raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
    except msgspec.DecodeError as exc:
        raise McpError(INVALID_PARAMS, f"Invalid params: {exc}") from None
    if method == "server/discover":
        return _complete(discover_result(server), method, server, opts)
    handler = custom if custom is not None else server.handlers.get(method)
    if handler is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
    token = meta.raw.get("progressToken")
    token = token if isinstance(token, int | str) and not isinstance(token, bool) else None
    if method not in MRTR_METHODS:
        peer = StatelessPeer(meta.client_capabilities, meta.log_level, emit, None, method)
        ctx = _context(peer, meta, request_id, token)
        return _complete(await handler(params, ctx), method, server, opts)
    return await _answer_mrtr(
        server, opts, method, params, meta, request_id, token, emit, handler, principal
    )


async def _answer_mrtr(
    server: Server,
    opts: StatelessOptions,
    method: str,
    params: Any,
    meta: RequestMeta,
    request_id: int | str,
    token: int | str | None,
    emit: Emit | None,
    handler: Any,
    principal: str | None,
) -> Any:
    codec = StateCodec(opts.secret, opts.state_ttl)  # cheap: holds the key and the ttl
    # Computed only when a state is opened or sealed (most calls never ask for input).
    request_params = params
    state_token = field_of(params, "request_state", "requestState")
    previous: RoundState | None = None
    if isinstance(state_token, str):
        previous = codec.open(state_token, binding_for(method, request_params, principal))
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
    round_ = InputRound(responses, meta.client_capabilities)
    peer = StatelessPeer(meta.client_capabilities, meta.log_level, emit, round_, method)
    ctx = _context(peer, meta, request_id, token)
    if _cannot_ask(server, method, params, handler):
        # A function without a context parameter has no way to ask: no runner task needed.
        return _complete(await handler(params, ctx), method, server, opts)
    outcome = await run_with_inputs(lambda: handler(params, ctx), round_)
    rounds = previous.rounds + 1 if previous is not None else 1
    if outcome.asked is None:
        result = outcome.result
        if not _is_input_required(result):
            return _complete(result, method, server, opts)
        # The handler built the InputRequiredResult itself: seal its state inside ours.
        own = field_of(result, "request_state", "requestState")
        asked = field_of(result, "input_requests", "inputRequests")
        keys = sorted(asked) if isinstance(asked, dict) else []
        binding = binding_for(method, request_params, principal)
        state = RoundState(binding, 0, rounds, keys, {}, own if isinstance(own, str) else None)
        sealed = codec.seal(state)
        if isinstance(result, t.InputRequiredResult):
            result = msgspec.structs.replace(result, request_state=sealed)
        else:
            result = {**result, "requestState": sealed}
        return _stamp_identity(result, server, opts)
    binding = binding_for(method, request_params, principal)
    state = RoundState(binding, 0, rounds, sorted(outcome.asked), dict(round_.consumed))
    result = t.InputRequiredResult(
        input_requests=_input_requests(outcome.asked),
        request_state=codec.seal(state),
        result_type="input_required",
    )
    if opts.server_info_in_meta:
        result.meta = {SERVER_INFO: msgspec.to_builtins(server.info())}
    return result


def _cannot_ask(server: Server, method: str, params: Any, handler: Any) -> bool:
    """Whether the registered function behind this request never receives the context."""
    if handler is not server.handlers.get(method) or method in server.custom:
        return False  # a low-level handler always gets the context
    if method == "tools/call":
        entry: Any = server.tools.get(field_of(params, "name", "name"))
    elif method == "prompts/get":
        entry = server.prompts.get(field_of(params, "name", "name"))
    else:
        return False  # resources/read: the matching template is only known inside
    return entry is not None and not entry.signature.skipped


def _with_state(params: Any, state: str | None) -> Any:
    if isinstance(params, dict):
        rest = {k: v for k, v in params.items() if k != "requestState"}
        return rest if state is None else {**rest, "requestState": state}
    return msgspec.structs.replace(params, request_state=msgspec.UNSET if state is None else state)


def _input_requests(asked: dict[str, dict[str, Any]]) -> Any:
    return decoder(dict[str, t.InputRequest]).decode(msgspec.json.encode(asked))


def _context(
    peer: StatelessPeer, meta: RequestMeta, request_id: int | str, token: int | str | None
) -> Context:
    return Context(
        peer=peer,
        protocol_version=meta.protocol_version,
        request_id=request_id,
        progress_token=token,
        meta=meta.raw,
    )


def _check_version(meta: RequestMeta, opts: StatelessOptions) -> None:
    version = meta.protocol_version
    if version not in STATELESS_VERSIONS or version not in opts.versions:
        raise McpError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(opts.versions), "requested": version},
        )


def _complete(result: Any, method: str, server: Server, opts: StatelessOptions) -> Any:
    """Stamp ``resultType``, the server's identity and (where cacheable) cache hints."""
    if _is_input_required(result):
        # mrtr.mdx, Supported Requests: never on other requests.
        raise McpError(INTERNAL_ERROR, f"{method} cannot answer input_required")
    if type(result) is dict and result.get("resultType") == "task":
        return _stamp_identity(result, server, opts)  # tasks extension: a CreateTaskResult
    extra: dict[str, Any] = {"resultType": "complete"}
    if method in CACHEABLE:
        hint = opts.hint(method)
        extra["ttlMs"] = hint.ttl_ms
        extra["cacheScope"] = hint.scope
    info = msgspec.to_builtins(server.info()) if opts.server_info_in_meta else None
    if isinstance(result, msgspec.Struct) and hasattr(result, "result_type"):
        updates: dict[str, Any] = {"result_type": "complete"}
        if "ttlMs" in extra and hasattr(result, "ttl_ms"):
            updates["ttl_ms"] = extra["ttlMs"]
            updates["cache_scope"] = extra["cacheScope"]
        if info is not None and hasattr(result, "meta"):
            current = result.meta
            base = {} if current is msgspec.UNSET or current is None else dict(current)
            updates["meta"] = {**base, SERVER_INFO: info}
        return msgspec.structs.replace(result, **updates)
    # A dict is sent as it is (it may hold pre-encoded msgspec.Raw values, e.g. a task's result).
    value = (
        {} if result is None else result if type(result) is dict else msgspec.to_builtins(result)
    )
    if not isinstance(value, dict):
        return result  # a custom method's non-object result: nothing to stamp
    value = {**value, **extra}
    if info is not None:
        value["_meta"] = {**(value.get("_meta") or {}), SERVER_INFO: info}
    return value


def _is_input_required(result: Any) -> bool:
    if isinstance(result, t.InputRequiredResult):
        return True
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _stamp_identity(result: Any, server: Server, opts: StatelessOptions) -> Any:
    if not opts.server_info_in_meta:
        return result
    info = msgspec.to_builtins(server.info())
    if isinstance(result, t.InputRequiredResult):
        base = {} if not isinstance(result.meta, dict) else result.meta
        return msgspec.structs.replace(
            result, result_type="input_required", meta={**base, SERVER_INFO: info}
        )
    return {**result, "_meta": {**(result.get("_meta") or {}), SERVER_INFO: info}}
