"""Bad input never crashes a stdio session: a real server process, fed raw lines by hand.

The server (``fault_server.py``) is spawned as a plain subprocess with binary pipes; the
initialize handshake is done with hand-written JSON lines, then every probe below is sent
one per line. Expected answers follow:

- JSON-RPC 2.0 §5 (Response object: the ``id`` is null when it could not be read) and §5.1
  (Error object: -32700 parse error, -32600 invalid request, -32601 method not found,
  -32602 invalid params), §6 (batches);
- MCP 2025-11-25 basic/index.mdx §Messages (ids are strings or integers, never null; the
  receiver of a notification MUST NOT send a response; error responses carry the request's
  id "except in error cases where the ID could not be read due a malformed request" -- the
  2025-11-25 schema then makes ``id`` optional, JSON-RPC §5 makes it null, so an unreadable
  id is checked as "null or absent"), basic/lifecycle.mdx (initialize once, nothing but
  ping before it), basic/transports.mdx §stdio (UTF-8 JSON, one message per line),
  basic/utilities/cancellation.mdx (no response after a cancellation), server/tools.mdx
  §Error Handling (unknown tool: -32602).

A probe that deserves no response is followed by a sentinel ``ping``: the very next line must
be the sentinel's result. Once all probes ran, a valid ``tools/call`` gets the right answer,
the process is still alive, nothing unexpected arrives, and closing stdin ends it cleanly.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from mcpbind import Client, McpError
from mcpbind import types as t
from mcpbind.transports import StdioClientTransport

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("fault_server.py"))
MAX_MESSAGE_SIZE = 32 * 1024  # configured in the server through its environment
NO_ID = object()  # an id that could not be read: null (JSON-RPC §5) or absent (MCP schema)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def request(rid: object, method: str, params: object = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def notification(method: str, params: object = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(rid: object, arguments: object, name: str = "add") -> bytes:
    return request(rid, "tools/call", {"name": name, "arguments": arguments})


INITIALIZE = request(
    0,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test-client", "version": "1"},
    },
)
DEEP = 10_000


@dataclass(frozen=True)
class Probe:
    name: str
    line: bytes
    code: int | None  # None: the probe deserves no response at all
    id: object = NO_ID
    message: str = ""  # a substring of the error message


PROBES: list[Probe] = [
    # -- not JSON at all: -32700 with no id (JSON-RPC §5.1; 2025-11-25 transports.mdx §stdio)
    #    ... answered on the top-level id when it is readable (issue 16, item 10)
    Probe("truncated JSON", b'{"jsonrpc":"2.0","id":1,"method":"pi', PARSE_ERROR, 1),
    Probe("truncated after a key", b'{"jsonrpc":"2.0","id":', PARSE_ERROR, message="truncated"),
    Probe("plain text", b"not json", PARSE_ERROR, message="malformed"),
    Probe("single quotes", b"{'jsonrpc':'2.0','id':2,'method':'ping'}", PARSE_ERROR),
    Probe("trailing garbage", request(3, "ping") + b" x", PARSE_ERROR, 3, "trailing"),
    Probe("invalid UTF-8 lead bytes", b'\xff\xfe{"jsonrpc":"2.0"}', PARSE_ERROR),
    Probe("UTF-8 byte-order mark", b"\xef\xbb\xbf" + request(4, "ping"), PARSE_ERROR, 4),
    Probe(
        "invalid UTF-8 in the method",
        b'{"jsonrpc":"2.0","id":5,"method":"pi\xc3(ng"}',
        PARSE_ERROR,
        5,
        "UTF-8",
    ),
    Probe("invalid escape", b'{"jsonrpc":"2.0","id":6,"method":"\\x41"}', PARSE_ERROR, 6),
    Probe("lone surrogate escape", b'{"jsonrpc":"2.0","id":7,"method":"\\ud800"}', PARSE_ERROR, 7),
    Probe(
        "lone surrogate escape in params",
        b'{"jsonrpc":"2.0","method":"ping","params":{"_meta":{"x":"\\udc00"}},"id":"s"}',
        PARSE_ERROR,
        "s",
    ),
    Probe("raw control character", b'{"jsonrpc":"2.0","id":8,"method":"p\x01"}', PARSE_ERROR, 8),
    Probe("NaN id", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', PARSE_ERROR),
    Probe("leading-zero id", b'{"jsonrpc":"2.0","id":01,"method":"ping"}', PARSE_ERROR),
    Probe("whitespace-only line", b"   \t ", PARSE_ERROR),
    # -- JSON, but not a request object: -32600 (JSON-RPC §4, §5.1)
    Probe("JSON number", b"42", INVALID_REQUEST, message="got `int`"),
    Probe("JSON string", b'"ping"', INVALID_REQUEST, message="got `str`"),
    Probe("JSON null", b"null", INVALID_REQUEST, message="got `null`"),
    Probe("JSON true", b"true", INVALID_REQUEST, message="got `bool`"),
    Probe("empty object", b"{}", INVALID_REQUEST, message='jsonrpc must be "2.0"'),
    # 2025-06-18 changelog: batching removed; a batch in a 2025-11-25 session is refused whole.
    Probe("empty array", b"[]", INVALID_REQUEST, message="batches are not supported"),
    Probe("array of scalars", b"[1,2]", INVALID_REQUEST, message="batches are not supported"),
    Probe(
        "batch of one valid ping",
        b"[" + request(9, "ping") + b"]",
        INVALID_REQUEST,
        message="batches are not supported in protocol version 2025-11-25",
    ),
    Probe(
        "missing jsonrpc",
        b'{"id":10,"method":"ping"}',
        INVALID_REQUEST,
        10,
        'jsonrpc must be "2.0"',
    ),
    Probe(
        "jsonrpc 1.0",
        b'{"jsonrpc":"1.0","id":11,"method":"ping"}',
        INVALID_REQUEST,
        11,
        'jsonrpc must be "2.0"',
    ),
    Probe(
        "jsonrpc as a number",
        b'{"jsonrpc":2.0,"id":12,"method":"ping"}',
        INVALID_REQUEST,
        message="at `$.jsonrpc`",
    ),
    # 2025-11-25 basic/index.mdx: "Requests MUST include a string or integer ID" (not null).
    Probe("id true", request(True, "ping"), INVALID_REQUEST, message="got `bool` - at `$.id`"),
    Probe("id float", request(1.5, "ping"), INVALID_REQUEST, message="got `float` - at `$.id`"),
    Probe("id object", request({"a": 1}, "ping"), INVALID_REQUEST, message="at `$.id`"),
    Probe("id array", request([1], "ping"), INVALID_REQUEST, message="at `$.id`"),
    Probe("id null", request(None, "ping"), INVALID_REQUEST, message="id is null"),
    Probe(
        "method a number",
        b'{"jsonrpc":"2.0","id":13,"method":1}',
        INVALID_REQUEST,
        message="got `int` - at `$.method`",
    ),
    Probe(
        "request carrying a result",
        b'{"jsonrpc":"2.0","id":14,"method":"ping","result":{}}',
        INVALID_REQUEST,
        14,
        "must not carry result or error",
    ),
    Probe(
        "only an id",
        b'{"jsonrpc":"2.0","id":15}',
        INVALID_REQUEST,
        15,
        "not a request, notification or response",
    ),
    Probe(
        "error member not an object",
        b'{"jsonrpc":"2.0","id":16,"error":"bad"}',
        INVALID_REQUEST,
        message="at `$.error`",
    ),
    Probe(
        "notification with jsonrpc 1.0",
        b'{"jsonrpc":"1.0","method":"notifications/initialized"}',
        INVALID_REQUEST,
        message='jsonrpc must be "2.0"',
    ),
    # 2025-11-25 basic/lifecycle.mdx: initialize is the first interaction, and only once.
    Probe(
        "initialize twice",
        INITIALIZE.replace(b'"id": 0', b'"id": 17'),
        INVALID_REQUEST,
        17,
        "already initialized",
    ),
    Probe(
        f"{DEEP}-level nested array",
        b"[" * DEEP + b"]" * DEEP,
        INVALID_REQUEST,
        message="nesting exceeds",
    ),
    Probe(
        f"{DEEP}-level nested params",
        b'{"jsonrpc":"2.0","id":18,"method":"ping","params":{"x":'
        + b"[" * DEEP
        + b"]" * DEEP
        + b"}}",
        INVALID_REQUEST,
        18,
        "nesting exceeds",
    ),
    Probe(
        "line above max_message_size",
        call(19, {"a": 1, "b": 2, "pad": "x" * (MAX_MESSAGE_SIZE + 100)}),
        INVALID_REQUEST,
        19,  # read from the line's first bytes (issue 16, item 10)
        f"Message too large: over {MAX_MESSAGE_SIZE} bytes",
    ),
    # -- method not found: -32601 (JSON-RPC §5.1)
    Probe("unknown method", request(20, "nope/nope"), METHOD_NOT_FOUND, 20, "nope/nope"),
    Probe("empty method", request(21, ""), METHOD_NOT_FOUND, 21, "Method not found"),
    Probe(
        "server-to-client method sent to the server",
        request(22, "sampling/createMessage", {"messages": [], "maxTokens": 1}),
        METHOD_NOT_FOUND,
        22,
        "sampling/createMessage",
    ),
    Probe(
        "notification method sent as a request",
        request(23, "notifications/initialized"),
        METHOD_NOT_FOUND,
        23,
        "notifications/initialized",
    ),
    Probe(
        "capability the server did not declare",
        request(24, "resources/list"),
        METHOD_NOT_FOUND,
        24,
        "capability 'resources' not declared",
    ),
    # -- invalid params: -32602, naming the offending field (JSON-RPC §5.1)
    Probe(
        "params an array",
        request(25, "tools/call", [1]),
        INVALID_PARAMS,
        25,
        "Expected `object`, got `array`",
    ),
    Probe(
        "params a string",
        request(26, "tools/call", "add"),
        INVALID_PARAMS,
        26,
        "Expected `object`, got `str`",
    ),
    Probe(
        "params null",
        b'{"jsonrpc":"2.0","id":27,"method":"ping","params":null}',
        INVALID_PARAMS,
        27,
        "Expected `object`, got `null`",
    ),
    Probe(
        "missing required params",
        request(28, "tools/call"),
        INVALID_PARAMS,
        28,
        "missing required field `name`",
    ),
    Probe(
        "missing required field",
        request(29, "tools/call", {"arguments": {}}),
        INVALID_PARAMS,
        29,
        "missing required field `name`",
    ),
    Probe(
        "name of the wrong type",
        request(30, "tools/call", {"name": 123}),
        INVALID_PARAMS,
        30,
        "Expected `str`, got `int` - at `$.params.name`",
    ),
    Probe(
        "arguments an array",
        request(31, "tools/call", {"name": "add", "arguments": [1, 2]}),
        INVALID_PARAMS,
        31,
        "Invalid params: Expected `object`, got `array` - at `$.params.arguments`",
    ),
    Probe(
        "cursor of the wrong type",
        request(32, "tools/list", {"cursor": 123}),
        INVALID_PARAMS,
        32,
        "at `$.params.cursor`",
    ),
    Probe(
        "_meta not an object",
        request(33, "ping", {"_meta": "x"}),
        INVALID_PARAMS,
        33,
        "at `$.params._meta`",
    ),
    Probe(
        "enum value out of range",
        request(34, "logging/setLevel", {"level": "loud"}),
        INVALID_PARAMS,
        34,
        "at `$.params.level`",
    ),
    Probe(
        "number beyond float range",
        b'{"jsonrpc":"2.0","id":35,"method":"ping","params":{"_meta":{"x":1e400}}}',
        INVALID_PARAMS,
        35,
        "Number out of range - at `$.params._meta",
    ),
    # server/tools.mdx §Error Handling: an unknown tool is a protocol error (-32602).
    Probe(
        "unknown tool",
        call(36, {}, name="no_such_tool"),
        INVALID_PARAMS,
        36,
        "Unknown tool: no_such_tool",
    ),
    Probe("invalid cursor", request(37, "tools/list", {"cursor": "!!"}), INVALID_PARAMS, 37),
    Probe(
        "custom method with params an array",
        request(38, "faults/echo", [1, 2]),
        INVALID_PARAMS,
        38,
        "Expected `object`, got `array`",
    ),
    Probe(
        "custom notification nobody registered",
        notification("faults/echo", {"x": 1}),
        None,
    ),
    # -- deserve no response (2025-11-25 basic/index.mdx: never answer a notification;
    #    a response is never answered either)
    Probe("empty line", b"", None),
    Probe("response for an unknown id", b'{"jsonrpc":"2.0","id":901,"result":{}}', None),
    Probe(
        "error response for an unknown id",
        b'{"jsonrpc":"2.0","id":902,"error":{"code":-1,"message":"x"}}',
        None,
    ),
    Probe(
        "response with both result and error",
        b'{"jsonrpc":"2.0","id":903,"result":{},"error":{"code":-1,"message":"x"}}',
        None,
    ),
    Probe(
        "error response with a null id",
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        None,
    ),
    Probe("unknown notification", notification("notifications/nope"), None),
    Probe(
        "cancel with requestId an object",
        notification("notifications/cancelled", {"requestId": {"a": 1}}),
        None,
    ),
    Probe("cancel with params a string", notification("notifications/cancelled", "x"), None),
    Probe(
        "cancel of an unknown id", notification("notifications/cancelled", {"requestId": 904}), None
    ),
    Probe("progress missing fields", notification("notifications/progress", {}), None),
    Probe("initialized a second time", notification("notifications/initialized"), None),
    # -- well-formed edge values that must simply work
    Probe(
        "huge integer id",
        b'{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"}',
        0,
        99999999999999999999999,
    ),
    Probe("negative id", request(-1, "ping"), 0, -1),
    Probe("empty-string id", request("", "ping"), 0, ""),
    Probe("string id equal to a used int", request("20", "ping"), 0, "20"),
]
"""``code`` 0 marks a probe that must succeed with ``{}`` (a ping)."""


class RawPeer:
    """One JSON message per line over a subprocess's pipes, with no mcpbind in between."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._buffer = bytearray()

    async def send(self, line: bytes) -> None:
        await self._stdin.send(line + b"\n")

    async def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while (end := self._buffer.find(b"\n")) < 0:
                self._buffer += await self._stdout.receive()
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        message: dict[str, Any] = json.loads(line)
        return message

    async def assert_quiet(self, seconds: float) -> None:
        """Nothing more arrives for ``seconds``."""
        with anyio.move_on_after(seconds):
            while b"\n" not in self._buffer:
                self._buffer += await self._stdout.receive()
        assert not self._buffer, f"unexpected output: {bytes(self._buffer)[:300]!r}"

    async def close_and_wait(self, timeout: float = 5.0) -> tuple[int, str]:
        """Close stdin (the stdio shutdown, basic/lifecycle.mdx); return exit status, stderr."""
        await self._stdin.aclose()
        assert self.process.stderr is not None
        err = bytearray()
        with anyio.fail_after(timeout):
            async for chunk in self.process.stderr:
                err += chunk
            status = await self.process.wait()
        return status, err.decode(errors="replace")


@asynccontextmanager
async def raw_server(**env: str) -> AsyncIterator[RawPeer]:
    """Spawn ``fault_server.py`` with binary pipes; yield a raw peer; always reap it.

    Its stderr is only read once it has exited (``RawPeer.close_and_wait``): the few log
    lines the probes cause fit in the pipe buffer.
    """
    process = await anyio.open_process([sys.executable, SERVER], env={**os.environ, **env})
    try:
        yield RawPeer(process)
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def handshake(peer: RawPeer, version: str = "2025-11-25") -> dict[str, Any]:
    await peer.send(INITIALIZE.replace(b"2025-11-25", version.encode()))
    reply = await peer.receive()
    await peer.send(notification("notifications/initialized"))
    return reply


def check(probe: Probe, reply: dict[str, Any]) -> list[str]:
    """Every way ``reply`` differs from what ``probe`` deserves."""
    problems = []
    if reply.get("jsonrpc") != "2.0":
        problems.append(f"jsonrpc is {reply.get('jsonrpc')!r}")
    if probe.id is NO_ID:
        if reply.get("id") is not None:
            problems.append(f"id {reply['id']!r}, expected null or absent")
    elif "id" not in reply or reply["id"] != probe.id or type(reply["id"]) is not type(probe.id):
        problems.append(f"id {reply.get('id')!r}, expected {probe.id!r}")
    if probe.code == 0:
        if reply.get("result") != {} or "error" in reply:
            problems.append(f"expected result {{}}, got {reply}")
        return problems
    error = reply.get("error")
    if not isinstance(error, dict) or "result" in reply:
        return [*problems, f"expected an error response, got {reply}"]
    if type(error.get("code")) is not int or error["code"] != probe.code:
        problems.append(f"code {error.get('code')!r}, expected {probe.code}")
    if not isinstance(error.get("message"), str) or probe.message not in error["message"]:
        problems.append(f"message {error.get('message')!r} lacks {probe.message!r}")
    return problems


async def test_probe_list_is_broad() -> None:
    assert len(PROBES) >= 40
    assert len({p.name for p in PROBES}) == len(PROBES)
    assert {p.code for p in PROBES} == {
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        None,
        0,
    }


async def test_malformed_lines_never_crash_the_stdio_session() -> None:
    env = {"MCPBIND_FAULTS_MAX_MESSAGE_SIZE": str(MAX_MESSAGE_SIZE)}
    async with raw_server(**env) as peer:
        # basic/lifecycle.mdx: before initialize only ping is allowed; the refusal has the id.
        await peer.send(call("early", {"a": 1, "b": 2}))
        early = await peer.receive()
        assert early["id"] == "early" and early["error"]["code"] == INVALID_REQUEST
        assert "not initialized" in early["error"]["message"]
        await peer.send(request("early-ping", "ping"))
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "early-ping", "result": {}}

        init = await handshake(peer)
        assert init["id"] == 0 and init["result"]["protocolVersion"] == "2025-11-25"

        failures: list[str] = []
        for n, probe in enumerate(PROBES):
            await peer.send(probe.line)
            if probe.code is None:
                sentinel = f"sentinel-{n}"
                await peer.send(request(sentinel, "ping"))
                reply = await peer.receive()
                if reply != {"jsonrpc": "2.0", "id": sentinel, "result": {}}:
                    failures.append(f"{probe.name}: answered {reply}")
                continue
            reply = await peer.receive()
            failures += [f"{probe.name}: {problem}" for problem in check(probe, reply)]
        assert not failures, "\n".join(failures)

        # A duplicate of an id still in flight is refused with that id; the original still
        # gets its one result (basic/index.mdx: ids MUST NOT be reused in a session).
        await peer.send(call(500, {"seconds": 0.3}, name="sleep"))
        await peer.send(request(500, "ping"))
        duplicate = await peer.receive()
        assert duplicate["id"] == 500 and duplicate["error"]["code"] == INVALID_REQUEST
        assert "already in flight" in duplicate["error"]["message"]
        original = await peer.receive()
        assert original["id"] == 500 and original["result"]["content"][0]["text"] == "slept"

        # basic/utilities/cancellation.mdx: a cancelled request gets no response at all.
        await peer.send(call(501, {"seconds": 30}, name="sleep"))
        await peer.send(notification("notifications/cancelled", {"requestId": 501}))
        await peer.send(request("after-cancel", "ping"))
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "after-cancel", "result": {}}

        # After all of that, a valid call gets the right answer from the same process.
        await peer.send(call(1000, {"a": 40, "b": 2}))
        answer = await peer.receive()
        assert answer["id"] == 1000
        assert answer["result"]["content"] == [{"type": "text", "text": "42"}]
        assert answer["result"]["structuredContent"] == {"result": 42}
        assert not answer["result"].get("isError", False)
        await peer.assert_quiet(0.3)  # nothing for the cancelled call or any probe, late
        assert peer.process.returncode is None

        status, stderr = await peer.close_and_wait()
        assert status == 0, stderr
        assert "Traceback" not in stderr, stderr


async def test_batch_refused_whole_on_2025_06_18() -> None:
    """2025-06-18 changelog: JSON-RPC batching removed; a batch gets one -32600, id unknown,
    and none of its members run."""
    async with raw_server() as peer:
        init = await handshake(peer, "2025-06-18")
        assert init["result"]["protocolVersion"] == "2025-06-18"
        await peer.send(b"[" + request(1, "ping") + b"," + request(2, "tools/list") + b"]")
        reply = await peer.receive()
        assert reply.get("id") is None and reply["error"]["code"] == INVALID_REQUEST
        assert (
            "batches are not supported in protocol version 2025-06-18" in reply["error"]["message"]
        )
        await peer.send(request(3, "ping"))
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}


INVALID_UTF8_IN_PARAMS = [
    pytest.param(
        request(7, "tools/call", {"name": "NAME"}).replace(b"NAME", b"\xc3("), id="request"
    ),
    pytest.param(
        notification("notifications/cancelled", {"requestId": "ID"}).replace(
            b"ID", b"\xed\xa0\x80"
        ),
        id="notification",
    ),
]


@pytest.mark.parametrize("line", INVALID_UTF8_IN_PARAMS)
async def test_invalid_utf8_inside_params_is_a_parse_error(line: bytes) -> None:
    """basic/transports.mdx §stdio: messages are UTF-8; RFC 8259 §8.1. A string that is not
    UTF-8 makes the message invalid JSON text: -32700 (for a request), and the session lives."""
    async with raw_server() as peer:
        await handshake(peer)
        await peer.send(line)
        await peer.send(request("after", "ping"))
        reply = await peer.receive()
        if b'"id": 7' in line:
            assert reply.get("id") in (None, 7) and reply["error"]["code"] == PARSE_ERROR
            reply = await peer.receive()
        assert reply == {"jsonrpc": "2.0", "id": "after", "result": {}}
        status, stderr = await peer.close_and_wait()
        assert (status, "Traceback" in stderr) == (0, False), stderr


# ---------------------------------------------------------------------- the client side
# The same rule for the client: a server writing garbage, stray responses, unknown requests and
# ill-shaped results (fault_server.py, mode "rude") fails single calls, never the session.


def rude_server() -> AbstractAsyncContextManager[StdioClientTransport]:
    return StdioClientTransport.spawn(
        sys.executable, [SERVER], env={"MCPBIND_FAULTS_MODE": "rude"}, close_timeout=0.5
    )


async def test_client_survives_a_rude_stdio_server() -> None:
    async with rude_server() as transport, Client(transport) as client:
        assert client.server_info is not None and client.server_info.name == "rude"
        with anyio.fail_after(10):
            # Each ping result comes after 7 lines of garbage (fault_server.RUDE_NOISE).
            for _ in range(3):
                assert await client.ping() is not None
            with pytest.raises(McpError) as shape:
                await client.call_tool(t.CallToolRequestParams(name="wrong-shape"))
            # A result that does not match the method's result type fails that call only.
            assert shape.value.code == -32603
            assert "Invalid result for tools/call" in shape.value.message
            assert "$.result.content" in shape.value.message
            with pytest.raises(McpError) as both:
                await client.call_tool(t.CallToolRequestParams(name="result-and-error"))
            assert both.value.code == INVALID_REQUEST  # JSON-RPC §5: result XOR error
            assert await client.ping() is not None
        assert client.connection is not None and not client.connection.closed
        assert client.connection.core.pending_ids() == []
        assert transport.returncode is None


async def test_client_survives_invalid_utf8_in_a_result() -> None:
    async with rude_server() as transport:
        try:
            async with Client(transport) as client:
                with anyio.fail_after(5), pytest.raises(McpError) as bad:
                    await client.call_tool(t.CallToolRequestParams(name="bad-utf8"))
                assert bad.value.code in (PARSE_ERROR, -32603)
                with anyio.fail_after(5):
                    assert await client.ping() is not None
        except BaseExceptionGroup as group:  # the crash surfaces as a group when leaving Client
            raise AssertionError(f"the client session crashed: {group.exceptions!r}") from group
