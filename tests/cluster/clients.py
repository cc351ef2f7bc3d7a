"""Clients for the cluster tests that record, request by request, the worker that answered
(``x-test-worker``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2 as httpx

from mcpbind import Client, ClientHandlers
from mcpbind import types as t
from mcpbind.http import StreamableHTTPTransport

__all__ = ["Tags", "tagged_client"]


class Tags:
    """The requests a client sent, in the order it sent them, each with the worker that
    answered it (the last ``x-test-worker``: a forwarded answer carries the owner's too)."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []  # [method, worker]
        self.resumes: list[list[str]] = []  # those that carried Last-Event-ID
        self.rpc: list[str] = []  # the JSON-RPC method each POST carried, "" for others
        self._pending: dict[int, list[str]] = {}

    async def request(self, request: httpx.Request) -> None:
        entry = [request.method, ""]
        self.sent.append(entry)
        body = json.loads(request.content) if request.method == "POST" else {}
        self.rpc.append(body.get("method", "") if isinstance(body, dict) else "")
        if "last-event-id" in request.headers:
            self.resumes.append(entry)
        self._pending[id(request)] = entry

    def roamed(self) -> bool:
        """Whether each request went to another worker than the one before (a request left
        unanswered, a stream the client was reopening as it closed, compares with neither)."""
        workers = [worker for _method, worker in self.sent]
        return all(a != b for a, b in itertools.pairwise(workers) if a and b)

    async def response(self, response: httpx.Response) -> None:
        entry = self._pending.pop(id(response.request), None)
        if entry is not None:
            entry[1] = response.headers.get_list("x-test-worker")[-1]


async def _elicit(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"name": "Ada"})


async def _sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    content = t.TextContent(text="Paris")
    return t.CreateMessageResult(role="assistant", content=content, model="test-model")


@asynccontextmanager
async def tagged_client(
    url: str, version: str, tags: Tags, log_level: str | None = None, **handlers: Any
) -> AsyncIterator[Client]:
    """mcpbind's ``Client`` at ``version``, its requests recorded in ``tags``; it answers
    elicitation (``name: Ada``) and sampling (``Paris``) requests."""
    hooks = {"request": [tags.request], "response": [tags.response]}
    async with (
        httpx.AsyncClient(event_hooks=hooks) as http,
        StreamableHTTPTransport(url, client=http) as transport,
        Client(
            transport,
            protocol_version=version,
            handlers=ClientHandlers(elicitation=_elicit, sampling=_sample, **handlers),
            timeout=20,
            log_level=log_level,
        ) as connected,
    ):
        yield connected
