"""mcpbind's client against mcpbind's own Streamable HTTP server (``StreamableHTTPApp``)
under uvicorn on 127.0.0.1, serving the interop surface (tests/interop/mcpbind_server.py).

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP, §Session Management.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx2
import pytest

from mcpbind import Client, ClientHandlers, ConnectionClosed, RequestOptions, types
from mcpbind.http.client import StreamableHTTPTransport, connect_http

from ._support import Running, server

pytestmark = pytest.mark.anyio
#: The handshake era these tests are about (the client default, "auto", may pick 2026-07-28).
ERA = "2025-11-25"


@pytest.fixture(scope="module")
def mcpbind_server() -> Iterator[Running]:
    with server("mcpbind") as running:
        yield running


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
async def test_round_trip(mcpbind_server: Running, version: str) -> None:
    """Handshake, tools, resources and prompts over HTTP, on each HTTP-era version.

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server, §Session Management.
    """
    url = mcpbind_server.base + "/mcp"
    async with Client(url, protocol_version=version, timeout=10) as client:
        assert client.protocol_version == version
        transport = client.connection.transport  # type: ignore[union-attr]
        assert isinstance(transport, StreamableHTTPTransport)
        assert transport.session_id is not None
        assert transport.protocol_version == version
        tools = await client.list_tools()
        assert "add" in {tool.name for tool in tools.tools}
        result = await client.call("add", {"a": 2, "b": 40})
        block = result.content[0]
        assert isinstance(block, types.TextContent) and block.text == "42"
        read = await client.read_resource(types.ReadResourceRequestParams(uri="mem://greeting"))
        content = read.contents[0]
        assert isinstance(content, types.TextResourceContents)
        assert content.text == "Hello from interop!"
        prompt = await client.get_prompt(
            types.GetPromptRequestParams(name="hello", arguments={"name": "Lin"})
        )
        message = prompt.messages[0].content
        assert isinstance(message, types.TextContent) and "Lin" in message.text


async def test_many_concurrent_calls(mcpbind_server: Running) -> None:
    """§Sending Messages: every request is its own POST; they run concurrently."""
    async with Client(mcpbind_server.base + "/mcp", protocol_version=ERA, timeout=10) as client:
        results: dict[int, str] = {}

        async def add(i: int) -> None:
            result = await client.call("add", {"a": i, "b": i})
            block = result.content[0]
            assert isinstance(block, types.TextContent)
            results[i] = block.text

        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(add, i)
        assert results == {i: str(2 * i) for i in range(50)}


async def test_killed_mcpbind_server_fails_the_client_fast() -> None:
    """A dead server: calls get ConnectionClosed once it stayed away for the transport's
    ``reconnect_timeout`` (it is waited for that long, in case it restarts: test_reconnect.py).

    Spec: 2025-11-25 basic/transports.mdx §Sending Messages to the Server.
    """
    with server("mcpbind") as srv:
        transport = connect_http(srv.base + "/mcp", reconnect_timeout=0.5)
        async with Client(transport, protocol_version=ERA, timeout=30) as client:
            await client.list_tools()
            connection = client.connection
            assert connection is not None
            srv.kill()
            with pytest.raises(ConnectionClosed):
                with anyio.fail_after(5):
                    await client.call("add", {"a": 1, "b": 1})


@pytest.fixture(scope="module")
def everything() -> Iterator[Running]:
    with server("mcpbind-everything") as running:
        yield running


async def test_resume_after_the_server_closes_the_connection(everything: Running) -> None:
    """§Sending Messages, point 6 (SSE polling): the server closes the POST's connection
    mid-call after a priming event; the client waits ``retry`` (100 ms), resumes with GET +
    Last-Event-ID and gets the response."""
    sent: list[tuple[str, str | None]] = []

    async def record(request: httpx2.Request) -> None:
        sent.append((request.method, request.headers.get("last-event-id")))

    async with (
        httpx2.AsyncClient(event_hooks={"request": [record]}) as http,
        Client(
            connect_http(everything.base + "/mcp", client=http), protocol_version=ERA, timeout=10
        ) as client,
    ):
        with anyio.fail_after(5):
            result = await client.call("test_reconnection")
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert block.text == "Reconnection test completed"
    resumes = [last for method, last in sent if method == "GET" and last]
    assert len(resumes) == 1


async def test_notifications_and_server_requests_on_the_post_stream(everything: Running) -> None:
    """§Sending Messages, point 6: the server's logs, progress and its own requests
    (sampling, elicitation) arrive on the request's SSE stream; the client's answers go
    back as POSTs."""
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    async def on_sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            content=types.TextContent(text="sampled over HTTP"), model="test", role="assistant"
        )

    async def on_elicit(params: object) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b"})

    handlers = ClientHandlers(logging=on_log, sampling=on_sample, elicitation=on_elicit)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(
        everything.base + "/mcp", protocol_version=ERA, handlers=handlers, timeout=10
    ) as client:
        await client.set_level(types.SetLevelRequestParams(level="info"))
        logged = await client.call("test_tool_with_logging")
        assert isinstance(logged.content[0], types.TextContent)
        assert logs == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        await client.call(
            "test_tool_with_progress", options=RequestOptions(on_progress=on_progress)
        )
        assert progress == [0, 50, 100]
        sampled = await client.call("test_sampling", {"prompt": "hi"})
        block = sampled.content[0]
        assert isinstance(block, types.TextContent) and "sampled over HTTP" in block.text
        elicited = await client.call("test_elicitation", {"message": "who?"})
        block = elicited.content[0]
        assert isinstance(block, types.TextContent) and '"username": "ada"' in block.text


async def test_killed_resumable_server_fails_the_pending_call_fast() -> None:
    """A dead server behind a resumable stream (event ids, ``retry: 1000``): the broken POST
    stream is not waited on for the retry delay; the pending call fails with ConnectionClosed
    in under a second (§Resumability: resuming is only worth it if the server is there)."""
    started = anyio.Event()

    async def never_answers(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    handlers = ClientHandlers(sampling=never_answers)
    with server("mcpbind-everything-default") as srv:
        # No GET stream: the broken POST stream alone must notice.
        transport = connect_http(srv.base + "/mcp", open_get_stream=False)
        async with Client(transport, protocol_version=ERA, handlers=handlers, timeout=30) as client:
            failed_at: list[float] = []

            async def pending() -> None:
                with pytest.raises(ConnectionClosed):
                    await client.call("test_sampling", {"prompt": "hi"})
                failed_at.append(anyio.current_time())

            async with anyio.create_task_group() as tg:
                tg.start_soon(pending)
                with anyio.fail_after(5):
                    await started.wait()  # the call's stream is open, with a priming event id
                killed_at = anyio.current_time()
                srv.kill()
            assert failed_at and failed_at[0] - killed_at < 1.0, failed_at[0] - killed_at
