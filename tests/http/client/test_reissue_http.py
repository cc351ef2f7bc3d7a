"""2026-07-28 basic/transports/streamable-http.mdx (changelog, major change 9): no stream
resumption; a request whose response stream broke is re-issued with a new request id."""

from __future__ import annotations

import anyio

from mcpbind import Client

from ._support import Running


def test_broken_stream_is_reissued_with_a_new_id(mock: Running) -> None:
    """The server drops the first response stream of ``flaky``; the client sends the call
    again (new id, same params) and returns the second answer."""

    async def go() -> str:
        async with Client(mock.url, protocol_version="auto") as client:
            with anyio.fail_after(20):
                result = await client.call("flaky", {"key": "reissue-1"})
            return result.content[0].text  # type: ignore[union-attr]

    mock.clear()
    assert anyio.run(go) == "flaky reissue-1 ok"
    calls = [e["body"] for e in mock.requests("tools/call")]
    assert len(calls) == 2
    assert calls[0]["id"] != calls[1]["id"]
    assert calls[0]["params"]["arguments"] == calls[1]["params"]["arguments"]
