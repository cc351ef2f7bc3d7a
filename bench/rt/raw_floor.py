"""The raw floor of the round-trip benchmark: msgspec JSON-RPC line echo, no MCP SDK at all.

This is what a ``tools/call echo`` round trip costs in Python when nothing but the wire
work is done: newline-delimited JSON-RPC over a pipe (or an in-process stream), decoded and
encoded with msgspec into typed structs. An SDK cannot beat it on the same transport; the
gap between an SDK and this floor is the SDK's own overhead.

Subcommands::

    python raw_floor.py server
        The child process. Blocking loop: read one line from stdin, decode the JSON-RPC
        request with msgspec, write the response line (``tools/call`` -> a CallToolResult
        with one text block echoing ``arguments.text``; ``initialize`` -> a minimal
        InitializeResult; notifications get no answer), flush, repeat until EOF.

    python raw_floor.py client --transport stdio|memory [--driver async|sync] [common args]
                               [-- SERVER_CMD...]
        --driver async (default, the reference floor): asyncio event loop (run via anyio,
            like the SDK clients); a reader task resolves per-request futures by id.
            stdio spawns SERVER_CMD (default: this file's ``server``) with asyncio
            subprocess pipes; memory runs the server loop as a task in this process,
            connected by two anyio memory object streams carrying the encoded lines.
        --driver sync (stdio only, informational): no event loop at all, blocking
            write/flush/readline on the pipes; 32-in-flight primes 32 requests and sends
            one more per response read.

Both drivers do ``initialize`` + ``notifications/initialized`` first, then the timed echo
calls; the command line and the JSON line printed are those of ``harness.py``.

``--protocol 2026-07-28`` (server and async client, informational floor for the 2026 rows):
the stateless era. No ``initialize``; every request carries the three ``_meta`` keys
(``io.modelcontextprotocol/protocolVersion``, ``clientCapabilities``, ``clientInfo``), the
server checks the version (-32022 otherwise) and every result carries ``resultType``,
which the client checks. The default (handshake) floor is unchanged by this option.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    Connector,
    EchoFn,
    ModeResult,
    build_parser,
    main,
    summarize,
)

PROTOCOL_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
META_PREFIX = "io.modelcontextprotocol/"


# ---- wire types -------------------------------------------------------------------------


class Request(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    id: int | str | None = None
    params: msgspec.Raw = msgspec.Raw(b"null")


class EchoArguments(msgspec.Struct):
    text: str


class CallToolParams(msgspec.Struct):
    name: str
    arguments: EchoArguments


class TextContent(msgspec.Struct):
    type: str
    text: str


class CallToolResult(msgspec.Struct, omit_defaults=True):
    content: list[TextContent]
    isError: bool = False


class ResultResponse(msgspec.Struct):
    jsonrpc: str
    id: int | str | None
    result: msgspec.Raw


class ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: int | str | None
    error: dict[str, Any]


class Response(msgspec.Struct):
    """Decoding side: either ``result`` (non-empty Raw) or ``error`` is present."""

    jsonrpc: str
    id: int | str | None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: dict[str, Any] | None = None


class RequestMeta(msgspec.Struct):
    """The per-request ``_meta`` of the 2026-07-28 era (only what the floor reads)."""

    protocol_version: str = msgspec.field(name=META_PREFIX + "protocolVersion")


class CallToolParamsStateless(msgspec.Struct):
    name: str
    arguments: EchoArguments
    meta: RequestMeta = msgspec.field(name="_meta")


class CallToolResultStateless(msgspec.Struct, omit_defaults=True):
    content: list[TextContent]
    resultType: str
    isError: bool = False


INITIALIZE_RESULT = msgspec.Raw(
    msgspec.json.encode(
        {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-floor", "version": "1.0.0"},
        }
    )
)


# ---- server side --------------------------------------------------------------------------


class EchoHandler:
    """Bytes-in, bytes-out request handler shared by the pipe server and the memory server."""

    def __init__(self) -> None:
        self._decode_request = msgspec.json.Decoder(Request).decode
        self._decode_call = msgspec.json.Decoder(CallToolParams).decode
        self._encoder = msgspec.json.Encoder()

    def handle(self, line: bytes) -> bytes | None:
        """Return the response line (with its newline), or None for a notification."""
        request = self._decode_request(line)
        if request.id is None:
            return None
        if request.method == "tools/call":
            params = self._decode_call(request.params)
            result = CallToolResult(content=[TextContent("text", params.arguments.text)])
            result_raw = msgspec.Raw(self._encoder.encode(result))
            return self._encoder.encode(ResultResponse("2.0", request.id, result_raw)) + b"\n"
        if request.method == "initialize":
            body = ResultResponse("2.0", request.id, INITIALIZE_RESULT)
            return self._encoder.encode(body) + b"\n"
        error = ErrorResponse(
            "2.0", request.id, {"code": -32601, "message": f"unknown method {request.method}"}
        )
        return self._encoder.encode(error) + b"\n"


class StatelessEchoHandler:
    """The 2026-07-28 server: version checked from each request's ``_meta``, ``resultType``."""

    def __init__(self) -> None:
        self._decode_request = msgspec.json.Decoder(Request).decode
        self._decode_call = msgspec.json.Decoder(CallToolParamsStateless).decode
        self._encoder = msgspec.json.Encoder()

    def handle(self, line: bytes) -> bytes | None:
        request = self._decode_request(line)
        if request.id is None:
            return None
        if request.method != "tools/call":
            return self._error(request.id, -32601, f"unknown method {request.method}")
        params = self._decode_call(request.params)
        if params.meta.protocol_version != STATELESS_VERSION:
            return self._error(request.id, -32022, "unsupported protocol version")
        result = CallToolResultStateless(
            content=[TextContent("text", params.arguments.text)], resultType="complete"
        )
        result_raw = msgspec.Raw(self._encoder.encode(result))
        return self._encoder.encode(ResultResponse("2.0", request.id, result_raw)) + b"\n"

    def _error(self, request_id: int | str, code: int, message: str) -> bytes:
        error = ErrorResponse("2.0", request_id, {"code": code, "message": message})
        return self._encoder.encode(error) + b"\n"


def make_handler(protocol: str) -> EchoHandler | StatelessEchoHandler:
    return StatelessEchoHandler() if protocol == STATELESS_VERSION else EchoHandler()


def serve_pipe(stdin: IO[bytes], stdout: IO[bytes], protocol: str = PROTOCOL_VERSION) -> None:
    handle = make_handler(protocol).handle
    write = stdout.write
    flush = stdout.flush
    for line in stdin:
        if not line.strip():
            continue
        out = handle(line)
        if out is not None:
            write(out)
            flush()


# ---- client side ------------------------------------------------------------------------


class Correlator:
    """Client-side JSON-RPC correlation: encodes calls, resolves futures from response lines."""

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int | str, asyncio.Future[msgspec.Raw]] = {}
        self._encode = msgspec.json.Encoder().encode
        self._decode_response = msgspec.json.Decoder(Response).decode
        self._decode_result = msgspec.json.Decoder(CallToolResult).decode

    def request(self, method: str, params: Any) -> tuple[bytes, asyncio.Future[msgspec.Raw]]:
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[msgspec.Raw] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        line = self._encode(Request("2.0", method, request_id, msgspec.Raw(self._encode(params))))
        return line + b"\n", future

    @staticmethod
    def notification(method: str) -> bytes:
        return msgspec.json.encode(Request("2.0", method)) + b"\n"

    def feed(self, line: bytes) -> None:
        response = self._decode_response(line)
        future = self._pending.pop(response.id)  # type: ignore[arg-type]
        if response.error is not None or not response.result:
            future.set_exception(RuntimeError(f"error response: {response.error}"))
        else:
            future.set_result(response.result)

    def fail_all(self, exc: BaseException) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
        self._pending.clear()

    def echo_text(self, raw: msgspec.Raw) -> str:
        result = self._decode_result(raw)
        if result.isError:
            raise RuntimeError("echo returned isError")
        return result.content[0].text


INITIALIZE_PARAMS = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "raw-floor-client", "version": "1.0.0"},
}


def _default_server_cmd() -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "server"]


STATELESS_META = {
    META_PREFIX + "protocolVersion": STATELESS_VERSION,
    META_PREFIX + "clientCapabilities": {},
    META_PREFIX + "clientInfo": {"name": "raw-floor-client", "version": "1.0.0"},
}


class StatelessCorrelator(Correlator):
    """2026-07-28 client side: results must say ``resultType: complete``."""

    def __init__(self) -> None:
        super().__init__()
        self._decode_stateless = msgspec.json.Decoder(CallToolResultStateless).decode

    def echo_text(self, raw: msgspec.Raw) -> str:
        result = self._decode_stateless(raw)
        if result.isError or result.resultType != "complete":
            raise RuntimeError(f"unexpected echo result {result!r}")
        return result.content[0].text


@asynccontextmanager
async def connect_stdio_stateless(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
    """The 2026-07-28 floor: no handshake, ``_meta`` on every request."""
    cmd = server_cmd or [*_default_server_cmd(), "--protocol", STATELESS_VERSION]
    async with _connect_stdio(cmd, StatelessCorrelator(), handshake=False) as echo:
        yield echo


@asynccontextmanager
async def connect_stdio(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
    async with _connect_stdio(
        server_cmd or _default_server_cmd(), Correlator(), handshake=True
    ) as echo:
        yield echo


@asynccontextmanager
async def _connect_stdio(
    cmd: list[str], corr: Correlator, *, handshake: bool
) -> AsyncIterator[EchoFn]:
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def reader() -> None:
        feed = corr.feed
        try:
            while line := await stdout.readline():
                feed(line)
        finally:
            corr.fail_all(ConnectionError("server closed stdout"))

    reader_task = asyncio.ensure_future(reader())
    extra = {} if handshake else {"_meta": STATELESS_META}
    try:
        if handshake:
            line, fut = corr.request("initialize", INITIALIZE_PARAMS)
            stdin.write(line)
            await fut
            stdin.write(corr.notification("notifications/initialized"))

        async def echo(text: str) -> str:
            params = {"name": "echo", "arguments": {"text": text}, **extra}
            line, fut = corr.request("tools/call", params)
            stdin.write(line)  # asyncio buffers; one write syscall per call, like a flush
            return corr.echo_text(await fut)

        yield echo
    finally:
        stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        reader_task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(reader_task, return_exceptions=True)


@asynccontextmanager
async def connect_memory(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
    # Buffered streams (capacity > in-flight), so a send normally completes without
    # blocking; send_nowait / receive_nowait skip anyio's per-call checkpoint when the
    # stream can make progress, and fall back to the awaiting calls when it cannot.
    to_server_send, to_server_recv = anyio.create_memory_object_stream[bytes](MEMORY_BUFFER)
    to_client_send, to_client_recv = anyio.create_memory_object_stream[bytes](MEMORY_BUFFER)
    corr = Correlator()

    async def server(
        recv: MemoryObjectReceiveStream[bytes], send: MemoryObjectSendStream[bytes]
    ) -> None:
        handle = EchoHandler().handle
        async with recv, send:
            async for line in _drain(recv):
                out = handle(line)
                if out is not None:
                    await _send(send, out)

    async def reader(recv: MemoryObjectReceiveStream[bytes]) -> None:
        feed = corr.feed
        async with recv:
            async for line in _drain(recv):
                feed(line)

    async with anyio.create_task_group() as tg:
        tg.start_soon(server, to_server_recv, to_client_send)
        tg.start_soon(reader, to_client_recv)
        async with to_server_send:
            line, fut = corr.request("initialize", INITIALIZE_PARAMS)
            await _send(to_server_send, line)
            await fut
            await _send(to_server_send, corr.notification("notifications/initialized"))

            async def echo(text: str) -> str:
                line, fut = corr.request(
                    "tools/call", {"name": "echo", "arguments": {"text": text}}
                )
                await _send(to_server_send, line)
                return corr.echo_text(await fut)

            yield echo


MEMORY_BUFFER = 256


async def _send(stream: MemoryObjectSendStream[bytes], item: bytes) -> None:
    try:
        stream.send_nowait(item)
    except anyio.WouldBlock:
        await stream.send(item)


async def _drain(stream: MemoryObjectReceiveStream[bytes]) -> AsyncIterator[bytes]:
    receive_nowait = stream.receive_nowait
    while True:
        try:
            yield receive_nowait()
            continue
        except anyio.WouldBlock:
            pass
        try:
            yield await stream.receive()
        except anyio.EndOfStream:
            return


@asynccontextmanager
async def connect_memory_asyncio(server_cmd: list[str]) -> AsyncIterator[EchoFn]:
    """Informational variant: the same in-process echo over plain ``asyncio.Queue``s."""
    to_server: asyncio.Queue[bytes | None] = asyncio.Queue()
    to_client: asyncio.Queue[bytes | None] = asyncio.Queue()
    corr = Correlator()

    async def server() -> None:
        handle = EchoHandler().handle
        while (line := await to_server.get()) is not None:
            out = handle(line)
            if out is not None:
                to_client.put_nowait(out)
        to_client.put_nowait(None)

    async def reader() -> None:
        feed = corr.feed
        while (line := await to_client.get()) is not None:
            feed(line)

    async with anyio.create_task_group() as tg:
        tg.start_soon(server)
        tg.start_soon(reader)
        try:
            line, fut = corr.request("initialize", INITIALIZE_PARAMS)
            to_server.put_nowait(line)
            await fut
            to_server.put_nowait(corr.notification("notifications/initialized"))

            async def echo(text: str) -> str:
                line, fut = corr.request(
                    "tools/call", {"name": "echo", "arguments": {"text": text}}
                )
                to_server.put_nowait(line)
                return corr.echo_text(await fut)

            yield echo
        finally:
            to_server.put_nowait(None)


def make_connectors(args: argparse.Namespace) -> dict[str, Connector]:
    if args.protocol == STATELESS_VERSION:
        return {"stdio": connect_stdio_stateless}  # no in-memory 2026 row (see run.py)
    memory = connect_memory_asyncio if args.queue == "asyncio" else connect_memory
    return {"stdio": connect_stdio, "memory": memory}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--driver",
        choices=("async", "sync"),
        default="async",
        help="async: asyncio event loop (reference floor); sync: blocking pipes, stdio only",
    )
    parser.add_argument(
        "--queue",
        choices=("anyio", "asyncio"),
        default="anyio",
        help="memory transport: anyio memory object streams (reference) or asyncio.Queue",
    )
    add_protocol_argument(parser)


def add_protocol_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol",
        choices=(PROTOCOL_VERSION, STATELESS_VERSION),
        default=PROTOCOL_VERSION,
        help=f"wire era (default {PROTOCOL_VERSION}, initialize handshake); "
        f"{STATELESS_VERSION}: per-request _meta, async stdio only",
    )


# ---- synchronous driver (no event loop) -------------------------------------------------


class SyncPipeClient:
    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._in = stdin
        self._out = stdout
        self._next_id = 0
        self._encode = msgspec.json.Encoder().encode
        self._decode_response = msgspec.json.Decoder(Response).decode
        self._decode_result = msgspec.json.Decoder(CallToolResult).decode

    def send(self, method: str, params: Any) -> int:
        self._next_id += 1
        body = Request("2.0", method, self._next_id, msgspec.Raw(self._encode(params)))
        self._in.write(self._encode(body) + b"\n")
        self._in.flush()
        return self._next_id

    def send_echo(self, text: str) -> int:
        return self.send("tools/call", {"name": "echo", "arguments": {"text": text}})

    def receive(self) -> Response:
        line = self._out.readline()
        if not line:
            raise ConnectionError("server closed stdout")
        return self._decode_response(line)

    def receive_echo(self) -> tuple[int | str | None, str]:
        response = self.receive()
        if response.error is not None or not response.result:
            raise RuntimeError(f"error response: {response.error}")
        result = self._decode_result(response.result)
        return response.id, result.content[0].text


def sync_sequential(client: SyncPipeClient, calls: int, text: str) -> ModeResult:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(calls):
        t0 = clock()
        sent = client.send_echo(text)
        got_id, got = client.receive_echo()
        latencies.append(clock() - t0)
        if got_id != sent or got != text:
            raise AssertionError(f"bad echo response {got_id!r} {got!r}")
    return summarize(latencies, (clock() - start) / 1e9, 1)


def sync_concurrent(client: SyncPipeClient, calls: int, inflight: int, text: str) -> ModeResult:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    started: dict[int | str | None, int] = {}
    to_send = calls
    start = clock()
    for _ in range(min(inflight, calls)):
        started[client.send_echo(text)] = clock()
        to_send -= 1
    while started:
        got_id, got = client.receive_echo()
        latencies.append(clock() - started.pop(got_id))
        if got != text:
            raise AssertionError(f"bad echo text {got!r}")
        if to_send > 0:
            started[client.send_echo(text)] = clock()
            to_send -= 1
    return summarize(latencies, (clock() - start) / 1e9, inflight)


@contextmanager
def spawn_sync(server_cmd: list[str]) -> Iterator[SyncPipeClient]:
    proc = subprocess.Popen(
        server_cmd or _default_server_cmd(), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        client = SyncPipeClient(proc.stdin, proc.stdout)
        client.send("initialize", INITIALIZE_PARAMS)
        client.receive()
        proc.stdin.write(Correlator.notification("notifications/initialized"))
        proc.stdin.flush()
        yield client
    finally:
        proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def run_sync(args: argparse.Namespace) -> None:
    if args.transport != "stdio":
        sys.exit("the sync driver only supports --transport stdio")
    with spawn_sync(list(args.server_cmd)) as client:
        if args.warmup:
            sync_sequential(client, args.warmup, args.text)
            sync_concurrent(client, args.warmup, args.inflight, args.text)
        seq = sync_sequential(client, args.seq, args.text)
        conc = sync_concurrent(client, args.conc, args.inflight, args.text)
    line = {
        "impl": "raw-floor-sync",
        "transport": "stdio",
        "detail": f"msgspec {msgspec.__version__}, blocking pipes, no event loop",
        "sequential": seq,
        "concurrent": conc,
    }
    sys.stdout.write(json.dumps(line) + "\n")


def _describe(args: argparse.Namespace) -> str:
    if args.transport == "stdio":
        how = "asyncio subprocess pipes"
    elif args.queue == "asyncio":
        how = "asyncio.Queue"
    else:
        how = "anyio memory object streams"
    era = ", 2026-07-28 per-request _meta" if args.protocol == STATELESS_VERSION else ""
    return f"msgspec {msgspec.__version__}, {how}{era}"


def cli(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    command, rest = argv[0], argv[1:]
    if command == "server":
        server_parser = argparse.ArgumentParser(description="raw floor server")
        add_protocol_argument(server_parser)
        server_args = server_parser.parse_args(rest)
        serve_pipe(sys.stdin.buffer, sys.stdout.buffer, server_args.protocol)
        return
    if command != "client":
        sys.exit(f"unknown subcommand {command!r} (expected server or client)")
    parser = build_parser("raw floor client")
    add_arguments(parser)
    args = parser.parse_args(rest)
    if args.driver == "sync":
        if args.protocol != PROTOCOL_VERSION:
            sys.exit(f"the sync driver only speaks {PROTOCOL_VERSION}")
        run_sync(args)
        return
    main(
        "raw-floor",
        make_connectors,
        add_arguments=add_arguments,
        describe=_describe,
        argv=rest,
        server_cmd_optional=True,
    )


if __name__ == "__main__":
    cli(sys.argv[1:])
