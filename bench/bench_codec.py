"""Codec benchmark: mcpbind vs the official MCP Python SDK, in the same process.

Six realistic JSON-RPC messages are built once (as bytes). For each message and each
side the script times two paths:

decode+validate  bytes -> typed object
    mcpbind   one ``msgspec.json.Decoder`` pass (``mcpbind_types._common.decoder``) straight
              into the strict per-version (2025-11-25) struct of the whole message: the
              tagged request/notification struct (``CallToolRequest``, ``InitializeRequest``,
              ``ProgressNotification``) or, for responses, the envelope
              ``{"jsonrpc", "id", "result": <typed result>}`` with the typed result
              (``ListToolsResult``, ``CallToolResult``, ``ReadResourceResult``).
    official  what the SDK's transports and session do to reach the typed object, minus one
              step: ``jsonrpc_message_adapter.validate_json(data, by_name=False)`` (the
              pydantic JSON-RPC envelope, as every transport does; ``params``/``result`` come
              out as dicts), then ``<Model>.model_validate(params_or_result, by_name=False)``
              with the SDK's typed model (``mcp.types.ListToolsResult``,
              ``CallToolRequestParams``, ...). The per-version "surface" check that the SDK's
              ``ServerRunner``/``ClientSession`` also run (``mcp.types.methods``) is left out,
              which makes this the official SDK's *cheapest* path to a typed object.

The second table times two more decode paths, interleaved with the ones above:
    two-pass  mcpbind's runtime receive path: an envelope struct with ``params``/``result``
              as zero-copy ``msgspec.Raw``, then the typed params/result decoded from the raw
              slice with the type from the generated method table.
    session   the official decode plus the surface check, i.e. what the SDK really runs.

encode  typed object -> bytes
    mcpbind   ``mcpbind_types._common.encode(obj)`` (one ``msgspec.json.Encoder`` pass).
    official  what the SDK does to send it: ``model.model_dump(by_alias=True, mode="json",
              exclude_none=True)`` into a ``JSONRPCRequest``/``JSONRPCNotification``/
              ``JSONRPCResponse`` envelope, then ``.model_dump_json(by_alias=True,
              exclude_unset=True)`` and ``.encode()`` (the stdio transport writes UTF-8).

Timing: ``time.perf_counter`` around a loop of N calls, N auto-calibrated so one repeat takes
about ``--seconds`` (default 0.3 s), best of ``--repeat`` (default 5), garbage collector
enabled as in real use (``gc.collect()`` before each timed repeat, outside the timing). The
repeats of the sides of a comparison are interleaved so a burst of machine load hits both.
``--timer cpu`` measures this thread's CPU time (``time.thread_time``) instead: use it on a
machine shared with other work, where wall-clock numbers swing with the scheduler.

Usage::

    python bench/bench_codec.py            # full run (what `make bench-codec` runs)
    python bench/bench_codec.py --quick    # smoke test: tiny iteration counts
    python bench/bench_codec.py --check    # exit 1 when the targets do not hold
    python bench/bench_codec.py --timer cpu  # CPU time: stable on a busy machine

Targets: mcpbind decode+validate >= 10x the official SDK on every small and medium message,
and no slower (>= 1x) on the 100 KB resources/read result. Without ``--check`` the exit status
is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import base64
import gc
import importlib.metadata
import itertools
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import mcp.types as official
import msgspec
import pydantic
import pydantic_core
from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter
from mcp.types import methods as official_methods
from msgspec import UNSET, UnsetType

from mcpbind_types import _common
from mcpbind_types._common import MethodInfo
from mcpbind_types.v2025_11_25 import methods as wire_methods
from mcpbind_types.v2025_11_25 import types as wire

R = TypeVar("R")

DECODE_TARGET = 10.0
"""Minimum mcpbind/official decode+validate ratio on every small and medium message."""
LARGE_DECODE_TARGET = 1.0
"""Minimum ratio on the large (100 KB) message: no slower."""


class ResultResponse(msgspec.Struct, Generic[R], kw_only=True, gc=False, repr_omit_defaults=True):
    """A JSON-RPC result response with a typed ``result``.

    The 2025-11-25 bindings type ``JSONRPCResultResponse.result`` as ``dict[str, Any]`` (the
    schema does); this is the same shape as the generated 2026-07-28 ``*ResultResponse``
    structs (``id``, ``jsonrpc``, typed ``result``), parameterised by the result type.
    """

    id: wire.RequestId
    jsonrpc: Literal["2.0"]
    result: R


class Envelope(msgspec.Struct, kw_only=True, gc=False):
    """Any JSON-RPC message with ``params``/``result`` left undecoded (``msgspec.Raw``).

    The same shape as the runtime's receive envelope (``mcpbind.protocol.wire.Envelope``):
    the two-pass decode reads this, picks the params/result type from the generated method
    table, then decodes the raw slice with that type.
    """

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: wire.Error | UnsetType = UNSET


# --------------------------------------------------------------------------- messages


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _tool(rng: random.Random, i: int) -> dict[str, Any]:
    """One realistic tool definition: a JSON Schema with nested objects, enums, arrays."""
    domains = ["github", "jira", "slack", "postgres", "s3", "k8s", "calendar", "search", "docs"]
    verbs = ["list", "get", "create", "update", "delete", "search", "sync", "export"]
    nouns = ["issues", "pull_requests", "messages", "rows", "objects", "pods", "events", "pages"]
    domain, verb, noun = domains[i % len(domains)], verbs[i % len(verbs)], rng.choice(nouns)
    name = f"{domain}_{verb}_{noun}_{i}"
    props: dict[str, Any] = {
        "query": {
            "type": "string",
            "description": f"Free-text query used to {verb} {noun.replace('_', ' ')} in {domain}.",
            "minLength": 1,
            "maxLength": 512,
        },
        "limit": {
            "type": "integer",
            "description": "Maximum number of items to return.",
            "minimum": 1,
            "maximum": 100,
            "default": 25,
        },
        "sort": {
            "type": "string",
            "enum": ["created", "updated", "relevance", "name"],
            "description": "Sort key.",
            "default": "relevance",
        },
        "order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
        "filters": {
            "type": "object",
            "description": "Structured filters combined with AND.",
            "properties": {
                "labels": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only items carrying all of these labels.",
                    "uniqueItems": True,
                },
                "state": {"type": "string", "enum": ["open", "closed", "all"]},
                "created": {
                    "type": "object",
                    "properties": {
                        "after": {"type": "string", "format": "date-time"},
                        "before": {"type": "string", "format": "date-time"},
                    },
                    "additionalProperties": False,
                },
                "owner": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "pattern": "^[a-z0-9-]{3,40}$"},
                        "kind": {"type": "string", "enum": ["user", "team", "bot"]},
                    },
                    "required": ["id"],
                },
            },
            "additionalProperties": False,
        },
    }
    if i % 2 == 0:
        props["fields"] = {
            "type": "array",
            "description": "Fields to include in each returned item.",
            "items": {"type": "string", "enum": ["id", "title", "body", "author", "url", "tags"]},
        }
    if i % 3 == 0:
        props["dry_run"] = {
            "type": "boolean",
            "description": "Validate the request without applying it.",
            "default": False,
        }
    tool: dict[str, Any] = {
        "name": name,
        "title": f"{verb.capitalize()} {noun.replace('_', ' ')} ({domain})",
        "description": (
            f"{verb.capitalize()} {noun.replace('_', ' ')} in the connected {domain} workspace. "
            "Results are paginated; pass the returned cursor to continue. Requires the "
            f"`{domain}:{'write' if verb in ('create', 'update', 'delete') else 'read'}` scope."
        ),
        "inputSchema": {
            "type": "object",
            "properties": props,
            "required": ["query"] if i % 4 else ["query", "filters"],
            "additionalProperties": False,
        },
    }
    if i % 3 == 0:
        tool["outputSchema"] = {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "url": {"type": "string", "format": "uri"},
                            "updated": {"type": "string", "format": "date-time"},
                        },
                        "required": ["id", "title"],
                    },
                },
                "nextCursor": {"type": ["string", "null"]},
                "total": {"type": "integer", "minimum": 0},
            },
            "required": ["items"],
        }
    if i % 2 == 1:
        read_only = verb in ("list", "get", "search", "export")
        tool["annotations"] = {
            "title": tool["title"],
            "readOnlyHint": read_only,
            "destructiveHint": verb == "delete",
            "idempotentHint": read_only or verb == "update",
            "openWorldHint": domain in ("search", "slack"),
        }
    return tool


def msg_tools_list(rng: random.Random) -> bytes:
    tools = [_tool(rng, i) for i in range(50)]
    return _dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools, "nextCursor": "page-2"}})


def msg_tools_call_request() -> bytes:
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": 17,
            "method": "tools/call",
            "params": {
                "_meta": {"progressToken": "call-17-4f9c2a"},
                "name": "github_search_issues_5",
                "arguments": {
                    "query": "memory leak in stdio transport",
                    "limit": 20,
                    "sort": "updated",
                    "order": "desc",
                    "filters": {
                        "labels": ["bug", "transport", "needs-triage"],
                        "state": "open",
                        "created": {"after": "2025-09-01T00:00:00Z"},
                        "owner": {"id": "mcp-maintainers", "kind": "team"},
                    },
                    "fields": ["id", "title", "url", "author"],
                },
            },
        }
    )


def msg_tools_call_result(rng: random.Random) -> bytes:
    image = base64.b64encode(rng.randbytes(6144)).decode()  # 8 KB of base64
    report = "\n".join(
        f"- #{1200 + k} stdio transport leaks a buffer after {k + 3} reconnects (open, bug)"
        for k in range(12)
    )
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": 17,
            "result": {
                "content": [
                    {"type": "text", "text": f"Found 12 matching issues:\n{report}"},
                    {
                        "type": "image",
                        "data": image,
                        "mimeType": "image/png",
                        "annotations": {"audience": ["user"], "priority": 0.4},
                    },
                    {
                        "type": "resource",
                        "resource": {
                            "uri": "github://mcp/issues/1203",
                            "mimeType": "text/markdown",
                            "text": "# stdio transport leaks a buffer\n\nSteps to reproduce:\n"
                            "1. Start the server.\n2. Reconnect 3 times.\n3. Watch RSS grow.\n",
                        },
                        "annotations": {
                            "audience": ["assistant"],
                            "priority": 0.9,
                            "lastModified": "2025-11-02T09:14:00Z",
                        },
                    },
                    {
                        "type": "resource_link",
                        "uri": "github://mcp/issues/1207",
                        "name": "issue-1207",
                        "title": "Reconnect storm exhausts file descriptors",
                        "description": "Related issue with a reproduction script.",
                        "mimeType": "text/markdown",
                        "size": 4821,
                    },
                ],
                "structuredContent": {
                    "items": [
                        {
                            "id": str(1200 + k),
                            "title": f"stdio transport leaks a buffer after {k + 3} reconnects",
                            "url": f"https://github.com/example/mcp/issues/{1200 + k}",
                            "updated": f"2025-11-{k + 1:02d}T12:00:00Z",
                        }
                        for k in range(12)
                    ],
                    "nextCursor": None,
                    "total": 12,
                },
                "isError": False,
            },
        }
    )


_SENTENCES = [
    "The transport frames each message as one line of JSON.",
    "Responses are correlated with requests by their `id`; notifications carry no id.",
    "A progress token travels in `_meta` and comes back on every progress notification.",
    "Servers SHOULD validate every inbound message before dispatching it to a handler.",
    "Cancellation is best effort — a result may still arrive after the request was cancelled.",
    "Clients negotiate the protocol version during `initialize` and keep it for the session.",
    "Large resources are returned inline as text or base64 blobs, never streamed in chunks.",
    "The reader loop must never block on a slow handler; each request runs in its own task.",
    "Back-pressure is applied at the write side: a full buffer suspends the sender.",
    "Error responses use the JSON-RPC codes, with MCP-specific codes in the server range.",
    "See the “Lifecycle” section for the naïve reconnect strategy and why it fails.",
    'Paths on Windows look like "C:\\srv\\docs" and must be escaped inside JSON strings.',
]

_CODE = """```python
async def handle(line: bytes) -> None:
    msg = decode(line)\t# one pass, typed
    if msg.id is not None:
        await respond(msg.id, {"ok": True, "path": "C:\\\\tmp"})
```"""


def msg_resources_read(rng: random.Random) -> bytes:
    parts: list[str] = []
    size = 0
    while size < 100 * 1024:
        k = len(parts)
        if k % 12 == 0:
            block = f"## {k // 12 + 1}. {rng.choice(_SENTENCES)[:40].rstrip()}"
        elif k % 7 == 0:
            block = _CODE
        elif k % 5 == 0:
            block = "\n".join(f"- {rng.choice(_SENTENCES)}" for _ in range(rng.randint(3, 6)))
        else:
            block = " ".join(rng.choice(_SENTENCES) for _ in range(rng.randint(3, 7)))
        parts.append(block)
        size += len(block.encode()) + 2
    text = "\n\n".join(parts)
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "result": {
                "contents": [
                    {
                        "uri": "file:///srv/docs/transport-design.md",
                        "mimeType": "text/markdown",
                        "text": text,
                    }
                ]
            },
        }
    )


def msg_progress() -> bytes:
    return _dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": "call-17-4f9c2a",
                "progress": 0.5,
                "total": 1.0,
                "message": "Searched 512 of 1024 repositories",
            },
        }
    )


def msg_initialize() -> bytes:
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "roots": {"listChanged": True},
                    "sampling": {"context": {}, "tools": {}},
                    "elicitation": {"form": {}, "url": {}},
                    "tasks": {
                        "list": {},
                        "cancel": {},
                        "requests": {
                            "sampling": {"createMessage": {}},
                            "elicitation": {"create": {}},
                        },
                    },
                    "experimental": {"example.com/traces": {"enabled": True}},
                },
                "clientInfo": {
                    "name": "acme-desktop",
                    "title": "Acme Desktop",
                    "version": "3.14.1",
                    "description": "Acme's desktop assistant",
                    "websiteUrl": "https://acme.example.com/desktop",
                    "icons": [
                        {
                            "src": "https://acme.example.com/icon-48.png",
                            "mimeType": "image/png",
                            "sizes": ["48x48"],
                        },
                        {"src": "https://acme.example.com/icon.svg", "mimeType": "image/svg+xml"},
                    ],
                },
            },
        }
    )


# --------------------------------------------------------------------------- codec paths

Decode = Callable[[bytes], Any]
Encode = Callable[[Any], bytes]
Kind = Literal["request", "notification", "response"]
PROTOCOL_VERSION = "2025-11-25"


def _mcpbind_two_pass(table: Mapping[str, MethodInfo[Any, Any]], kind: Kind, method: str) -> Decode:
    """Envelope first, then the params (by the message's ``method``) or the result (by the
    pending request's ``method``), typed from the generated method table: what the runtime's
    receive loop does when it does not know the message kind up front."""
    envelope = _common.decoder(Envelope).decode
    if kind == "response":
        result = _common.decoder(table[method].wire_result_type).decode

        def decode_result(data: bytes) -> tuple[Envelope, Any]:
            env = envelope(data)
            if env.result is UNSET:
                raise TypeError("not a result response")
            return env, result(env.result)

        return decode_result

    def decode_params(data: bytes) -> tuple[Envelope, Any]:
        env = envelope(data)
        if env.method is UNSET:
            raise TypeError("not a request or notification")
        params = _common.decoder(table[env.method].params_type).decode
        return env, params(b"{}" if env.params is UNSET else env.params)

    return decode_params


def _dump(model: pydantic.BaseModel) -> dict[str, Any]:
    out: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return out


def _official(
    kind: Kind, model: type[pydantic.BaseModel], method: str
) -> tuple[Decode, Decode, Encode]:
    """The official SDK's paths for one message: (decode, session decode, encode).

    decode: the envelope (``jsonrpc_message_adapter.validate_json``), then the typed model of
    the params/result (``model_validate``). session decode: the same plus the per-version
    surface check the SDK's session runs in between (``ServerRunner`` for requests,
    ``ClientSession`` for results and notifications). encode: ``model_dump`` into the
    envelope, ``model_dump_json``, UTF-8.
    """
    validate_json = jsonrpc_message_adapter.validate_json
    model_validate = model.model_validate
    envelope_type: Any = {  # mypy joins the values to BaseModel, which msg always is
        "request": JSONRPCRequest,
        "notification": JSONRPCNotification,
        "response": JSONRPCResponse,
    }[kind]

    def envelope(data: bytes) -> Any:
        msg = validate_json(data, by_name=False)
        if not isinstance(msg, envelope_type):
            raise TypeError(f"expected a {envelope_type.__name__}, got {type(msg).__name__}")
        return msg

    def body(msg: Any) -> dict[str, Any]:
        if kind == "response":
            result: dict[str, Any] = msg.result
            return result
        return {} if msg.params is None else msg.params

    def decode(data: bytes) -> tuple[Any, pydantic.BaseModel]:
        msg = envelope(data)
        return msg, model_validate(body(msg), by_name=False)

    def session_decode(data: bytes) -> tuple[Any, Any]:
        msg = envelope(data)
        if kind == "request":  # mcp.server.runner: surface check, then params_type
            official_methods.validate_client_request(msg.method, PROTOCOL_VERSION, msg.params)
            return msg, model_validate(body(msg), by_name=False)
        if kind == "response":  # mcp.client.session.send_request
            official_methods.validate_server_result(method, PROTOCOL_VERSION, msg.result)
            return msg, model_validate(msg.result, by_name=False)
        # mcp.client.session._on_notify: surface check + the typed notification
        parsed = official_methods.parse_server_notification(
            msg.method, PROTOCOL_VERSION, msg.params
        )
        return msg, parsed

    def encode(obj: tuple[Any, pydantic.BaseModel]) -> bytes:
        env, typed = obj
        out: pydantic.BaseModel
        if kind == "request":
            out = JSONRPCRequest(jsonrpc="2.0", id=env.id, method=env.method, params=_dump(typed))
        elif kind == "notification":
            out = JSONRPCNotification(jsonrpc="2.0", method=env.method, params=_dump(typed))
        else:
            out = JSONRPCResponse(jsonrpc="2.0", id=env.id, result=_dump(typed))
        return out.model_dump_json(by_alias=True, exclude_unset=True).encode()

    return decode, session_decode, encode


@dataclass(frozen=True)
class Case:
    name: str
    size_class: Literal["small", "medium", "large"]
    data: bytes
    mcpbind_type: Any
    official_type: type[pydantic.BaseModel]
    mcpbind_decode: Decode
    mcpbind_encode: Encode
    mcpbind_two_pass: Decode
    official_decode: Decode
    official_session_decode: Decode
    official_encode: Encode


def build_cases(seed: int = 2025) -> list[Case]:
    """The six messages, with both sides' decode and encode paths."""
    rng = random.Random(seed)
    c2s, s2c = wire_methods.CLIENT_TO_SERVER, wire_methods.SERVER_TO_CLIENT

    def case(
        name: str,
        size_class: Literal["small", "medium", "large"],
        data: bytes,
        kind: Kind,
        method: str,
        mcpbind_type: Any,
        official_type: type[pydantic.BaseModel],
    ) -> Case:
        # Requests go client -> server; the result and notifications here go server -> client.
        table = c2s if kind != "notification" else s2c
        o_dec, o_session, o_enc = _official(kind, official_type, method)
        return Case(
            name=name,
            size_class=size_class,
            data=data,
            mcpbind_type=mcpbind_type,
            official_type=official_type,
            mcpbind_decode=_common.decoder(mcpbind_type).decode,
            mcpbind_encode=_common.encode,
            mcpbind_two_pass=_mcpbind_two_pass(table, kind, method),
            official_decode=o_dec,
            official_session_decode=o_session,
            official_encode=o_enc,
        )

    return [
        case(
            "tools/list result (50 tools)",
            "medium",
            msg_tools_list(rng),
            "response",
            "tools/list",
            ResultResponse[wire.ListToolsResult],
            official.ListToolsResult,
        ),
        case(
            "tools/call request",
            "small",
            msg_tools_call_request(),
            "request",
            "tools/call",
            wire.CallToolRequest,
            official.CallToolRequestParams,
        ),
        case(
            "tools/call result (text+image+resource+link)",
            "medium",
            msg_tools_call_result(rng),
            "response",
            "tools/call",
            ResultResponse[wire.CallToolResult],
            official.CallToolResult,
        ),
        case(
            "resources/read result (100 KB text)",
            "large",
            msg_resources_read(rng),
            "response",
            "resources/read",
            ResultResponse[wire.ReadResourceResult],
            official.ReadResourceResult,
        ),
        case(
            "progress notification",
            "small",
            msg_progress(),
            "notification",
            "notifications/progress",
            wire.ProgressNotification,
            official.ProgressNotificationParams,
        ),
        case(
            "initialize request",
            "small",
            msg_initialize(),
            "request",
            "initialize",
            wire.InitializeRequest,
            official.InitializeRequestParams,
        ),
    ]


def verify(cases: list[Case]) -> None:
    """Fail loudly unless every path does the work the benchmark claims to measure.

    mcpbind: the decoded object has the strict type and re-encodes to JSON equal to the input
    (nothing dropped, nothing added); the two-pass decode yields typed params/result that also
    re-encode to the input's. Official: both decodes yield the SDK's typed models, and the
    encoding parses back to the same envelope (the SDK adds defaults such as ``resultType``).
    """
    for c in cases:
        original = json.loads(c.data)
        obj = c.mcpbind_decode(c.data)
        expected = getattr(c.mcpbind_type, "__origin__", c.mcpbind_type)
        if not isinstance(obj, expected):
            raise AssertionError(f"{c.name}: mcpbind decoded {type(obj).__name__}")
        if json.loads(c.mcpbind_encode(obj)) != original:
            raise AssertionError(f"{c.name}: mcpbind re-encoding differs from the input")
        _, inner = c.mcpbind_two_pass(c.data)
        part = original["result"] if "result" in original else original["params"]
        if not isinstance(inner, msgspec.Struct) or json.loads(_common.encode(inner)) != part:
            raise AssertionError(f"{c.name}: mcpbind two-pass decode differs from the input")
        env, typed = c.official_decode(c.data)
        if not isinstance(typed, c.official_type):
            raise AssertionError(f"{c.name}: official decoded {type(typed).__name__}")
        _, session_typed = c.official_session_decode(c.data)
        if not isinstance(session_typed, pydantic.BaseModel):
            raise AssertionError(f"{c.name}: official session path decoded {session_typed!r}")
        again = json.loads(c.official_encode((env, typed)))
        if again.get("id") != original.get("id") or again.get("method") != original.get("method"):
            raise AssertionError(f"{c.name}: official re-encoding lost the envelope")


# --------------------------------------------------------------------------- timing


Timer = Callable[[], float]
TIMERS: dict[str, Timer] = {"wall": time.perf_counter, "cpu": time.thread_time}
"""``wall`` is the default; ``cpu`` (this thread's CPU time) ignores time spent descheduled,
which keeps the numbers stable on a machine shared with other work."""


def _run(fn: Callable[[Any], Any], arg: Any, n: int, timer: Timer = time.perf_counter) -> float:
    loop = itertools.repeat(None, n)
    t0 = timer()
    for _ in loop:
        fn(arg)
    return timer() - t0


def _calibrate(
    fn: Callable[[Any], Any], arg: Any, seconds: float, timer: Timer = time.perf_counter
) -> int:
    """Calls of ``fn(arg)`` that take about ``seconds``."""
    n = 1
    while True:
        elapsed = _run(fn, arg, n, timer)
        if elapsed >= seconds / 10 or n >= 1 << 30:
            break
        n *= 10 if elapsed < seconds / 100 else 2
    return max(1, int(n * seconds / max(elapsed, 1e-9)))


def ops_per_second(
    fns: list[tuple[Callable[[Any], Any], Any]],
    seconds: float,
    repeat: int,
    timer: Timer = time.perf_counter,
) -> list[float]:
    """Best-of-``repeat`` calls per second of each ``fn(arg)``, each repeat about ``seconds``.

    The functions' repeats are interleaved (A, B, A, B, ...), so a burst of load from the rest
    of the machine hits every side of a comparison alike.
    """
    gc.collect()
    counts = [_calibrate(fn, arg, seconds, timer) for fn, arg in fns]
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, ((fn, arg), n) in enumerate(zip(fns, counts, strict=True)):
            gc.collect()
            best[i] = min(best[i], _run(fn, arg, n, timer))
    return [n / t for n, t in zip(counts, best, strict=True)]


@dataclass(frozen=True)
class Row:
    case: Case
    m_dec: float
    o_dec: float
    m_enc: float
    o_enc: float
    m_two: float
    """mcpbind two-pass decode."""
    o_session: float
    """Official decode with the session's per-version surface check."""

    @property
    def dec_ratio(self) -> float:
        return self.m_dec / self.o_dec

    @property
    def enc_ratio(self) -> float:
        return self.m_enc / self.o_enc

    @property
    def dec_target(self) -> float:
        return LARGE_DECODE_TARGET if self.case.size_class == "large" else DECODE_TARGET

    @property
    def ok(self) -> bool:
        return self.dec_ratio >= self.dec_target


def measure(
    cases: list[Case], seconds: float, repeat: int, timer: Timer = time.perf_counter
) -> list[Row]:
    rows = []
    for c in cases:
        m_dec, o_dec, m_two, o_session = ops_per_second(
            [
                (c.mcpbind_decode, c.data),
                (c.official_decode, c.data),
                (c.mcpbind_two_pass, c.data),
                (c.official_session_decode, c.data),
            ],
            seconds,
            repeat,
            timer,
        )
        m_enc, o_enc = ops_per_second(
            [
                (c.mcpbind_encode, c.mcpbind_decode(c.data)),
                (c.official_encode, c.official_decode(c.data)),
            ],
            seconds,
            repeat,
            timer,
        )
        rows.append(Row(c, m_dec, o_dec, m_enc, o_enc, m_two, o_session))
        print(f"  measured {c.name}", file=sys.stderr, flush=True)
    return rows


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _ops(x: float) -> str:
    return f"{x:,.0f}"


def render(rows: list[Row]) -> str:
    lines = [
        "| message | size | mcpbind decode ops/s | official decode ops/s | ratio "
        "| mcpbind encode ops/s | official encode ops/s | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.case.name} | {_size(len(r.case.data))} | {_ops(r.m_dec)} | {_ops(r.o_dec)} "
            f"| {r.dec_ratio:.1f}x | {_ops(r.m_enc)} | {_ops(r.o_enc)} | {r.enc_ratio:.1f}x |"
        )
    return "\n".join(lines)


def render_paths(rows: list[Row]) -> str:
    lines = [
        "Other decode paths, measured interleaved with the ones above:",
        "  two-pass = the runtime's receive path: envelope with msgspec.Raw params/result,",
        "             then the typed params/result from the generated method table;",
        "  session  = the official decode plus the per-version surface check that the SDK's",
        "             ServerRunner / ClientSession run before the typed model.",
        "",
        "| message | mcpbind two-pass ops/s | vs official decode | official session ops/s "
        "| mcpbind vs session | two-pass vs session |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.case.name} | {_ops(r.m_two)} | {r.m_two / r.o_dec:.1f}x "
            f"| {_ops(r.o_session)} | {r.m_dec / r.o_session:.1f}x "
            f"| {r.m_two / r.o_session:.1f}x |"
        )
    return "\n".join(lines)


def verdict(rows: list[Row]) -> tuple[bool, str]:
    failed = [r for r in rows if not r.ok]
    small = min((r.dec_ratio for r in rows if r.case.size_class != "large"), default=0.0)
    large = min((r.dec_ratio for r in rows if r.case.size_class == "large"), default=0.0)
    summary = (
        f"(decode+validate vs official decode: min small/medium {small:.1f}x, target >= "
        f"{DECODE_TARGET:.0f}x; 100 KB {large:.1f}x, target >= {LARGE_DECODE_TARGET:.0f}x)"
    )
    if not failed:
        return True, f"TARGETS HOLD {summary}"
    names = ", ".join(f"{r.case.name} {r.dec_ratio:.1f}x" for r in failed)
    return False, f"TARGETS FAIL on {names} {summary}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="smoke test: tiny iteration counts")
    ap.add_argument("--check", action="store_true", help="exit 1 when the targets do not hold")
    ap.add_argument("--seconds", type=float, default=0.3, help="target seconds per repeat")
    ap.add_argument("--repeat", type=int, default=5, help="repeats per cell (best is kept)")
    ap.add_argument(
        "--timer",
        choices=sorted(TIMERS),
        default="wall",
        help="wall: time.perf_counter (default); cpu: time.thread_time, for a shared machine",
    )
    args = ap.parse_args(argv)
    seconds, repeat = (0.002, 1) if args.quick else (args.seconds, args.repeat)

    cases = build_cases()
    verify(cases)
    print(
        f"python {platform.python_version()} | msgspec {msgspec.__version__} | "
        f"mcp {_dist_version('mcp')} | pydantic {pydantic.VERSION} "
        f"(core {pydantic_core.__version__}) | {platform.machine()}, {os.cpu_count()} cpus | "
        f"gc enabled | {args.timer} time, best of {repeat}, ~{seconds:g} s per repeat"
        f"{' (QUICK: numbers are meaningless)' if args.quick else ''}",
        flush=True,
    )
    rows = measure(cases, seconds, repeat, TIMERS[args.timer])
    print()
    print(render(rows))
    print()
    print(render_paths(rows))
    print()
    ok, line = verdict(rows)
    print(line)
    return 1 if args.check and not ok else 0


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
