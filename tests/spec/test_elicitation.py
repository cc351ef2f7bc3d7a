"""client/elicitation.mdx (2025-06-18, 2025-11-25): a server handler asks the user through
``elicitation/create`` (form and URL modes), only in the modes the client declared; URL-mode
completion notifications and the -32042 error; older versions when the client declared it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpbind import ClientHandlers, PeerError, json_value
from mcpbind import types as t
from mcpbind.protocol import URL_ELICITATION_REQUIRED, UrlElicitationRequired

from .conftest import Connect
from .helpers import text_of

pytestmark = pytest.mark.anyio


class Elicitor:
    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.requests: list[Any] = []

    async def __call__(self, params: Any) -> t.ElicitResult:
        self.requests.append(params)
        result = t.ElicitResult(action=self.action)  # type: ignore[arg-type]
        if self.content is not None:
            result.content = self.content
        return result


async def test_form_mode_accept(connect: Connect) -> None:
    """elicitation.mdx §Form Mode Elicitation Requests / §Requested Schema / §Response Actions:
    the request carries a message and a flat requestedSchema; "accept" returns the content."""
    elicitor = Elicitor("accept", {"name": "Ada"})
    async with connect("full", handlers=ClientHandlers(elicitation=elicitor)) as client:
        result = await client.call("elicit_name")
    assert json_value(result.structured_content) == {"action": "accept", "content": {"name": "Ada"}}
    (request,) = elicitor.requests
    assert isinstance(request, t.ElicitRequestFormParams)
    assert request.message == "What is your name?"
    assert request.requested_schema.required == ["name"]
    assert request.requested_schema.properties["name"] == t.StringSchema(
        type="string", min_length=1
    )


@pytest.mark.memory_only
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_carry_no_content(connect: Connect, action: str) -> None:
    """elicitation.mdx §Response Actions: "decline" (explicit refusal) and "cancel" (dismissed)
    carry no content."""
    handlers = ClientHandlers(elicitation=Elicitor(action))
    async with connect("full", handlers=handlers) as client:
        result = await client.call("elicit_name")
    assert json_value(result.structured_content) == {"action": action, "content": None}


@pytest.mark.memory_only
async def test_url_mode(connect: Connect) -> None:
    """elicitation.mdx §URL Mode Elicitation Requests (2025-11-25): mode "url" with url and
    elicitationId; the client answers with an action only."""
    elicitor = Elicitor("accept")
    async with connect("full", handlers=ClientHandlers(elicitation=elicitor)) as client:
        assert text_of(await client.call("elicit_url")) == "accept"
    (request,) = elicitor.requests
    assert isinstance(request, t.ElicitRequestURLParams)
    assert (request.url, request.elicitation_id) == ("https://example.com/login", "e-1")


@pytest.mark.memory_only
async def test_elicitation_refused_without_the_capability(connect: Connect) -> None:
    """elicitation.mdx §Capabilities: "Clients that support elicitation MUST declare the
    elicitation capability" -- without it the server refuses locally; the tool reports it."""
    async with connect("full") as client:
        result = await client.call("elicit_name")
    assert result.is_error is True
    assert "elicitation" in text_of(result)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_declared_elicitation_is_exchanged_on_versions_before_it(
    connect: Connect, version: str
) -> None:
    """lifecycle.mdx §Capability Negotiation: elicitation arrived in 2025-06-18, yet a client
    that declares it on an older version gets it, as both official SDKs do (they gate on the
    declared capability, not the version): never declare what you then refuse."""
    elicitor = Elicitor("accept", {"name": "Ada"})
    handlers = ClientHandlers(elicitation=elicitor)
    async with connect("full", handlers=handlers, protocol_version=version) as client:
        assert client.protocol_version == version
        assert client.capabilities().elicitation is not msgspec.UNSET  # declared ...
        assert text_of(await client.call("supports", {"path": ["elicitation"]})) == "true"
        result = await client.call("elicit_name")  # ... and answered
    assert json_value(result.structured_content) == {"action": "accept", "content": {"name": "Ada"}}
    assert len(elicitor.requests) == 1


@pytest.mark.memory_only
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_undeclared_elicitation_before_it_existed_is_refused_by_version(
    connect: Connect, version: str
) -> None:
    """lifecycle.mdx §Operation ("Respect the negotiated protocol version"): without the
    capability, ``ctx.client_supports`` and ``ctx.elicit`` agree, and the refusal names the
    version."""
    async with connect("full", protocol_version=version) as client:
        assert text_of(await client.call("supports", {"path": ["elicitation"]})) == "false"
        result = await client.call("elicit_name")
    assert result.is_error is True
    assert f"'elicitation/create' is not in protocol version {version}" in text_of(result)


# ------------------------------------------------------------- §Capabilities: modes
@pytest.mark.memory_only
async def test_url_mode_is_not_sent_to_a_form_only_client(connect: Connect) -> None:
    """elicitation.mdx §Capabilities: "Servers MUST NOT send elicitation requests with modes
    that are not supported by the client": a form-only client gets form requests only."""
    elicitor = Elicitor("accept", {"name": "Ada"})
    handlers = ClientHandlers(elicitation=elicitor, elicitation_modes=("form",))
    async with connect("full", handlers=handlers) as client:
        assert client.capabilities().elicitation == t.ClientCapabilitiesElicitation(form={})
        assert text_of(await client.call("supports", {"path": ["elicitation", "url"]})) == "false"
        refused = await client.call("elicit_url")
        accepted = await client.call("elicit_name")
    assert refused.is_error is True
    assert "needs the client capability 'elicitation.url'" in text_of(refused)
    assert accepted.is_error is not True
    assert [type(r) for r in elicitor.requests] == [t.ElicitRequestFormParams]


@pytest.mark.memory_only
async def test_form_mode_is_not_sent_to_a_url_only_client(connect: Connect) -> None:
    """elicitation.mdx §Capabilities: a URL-only client declares ``{"url": {}}``; form
    requests are refused before they are sent."""
    elicitor = Elicitor("accept")
    handlers = ClientHandlers(elicitation=elicitor, elicitation_modes=("url",))
    async with connect("full", handlers=handlers) as client:
        refused = await client.call("elicit_name")
        assert text_of(await client.call("elicit_url")) == "accept"
    assert refused.is_error is True and "'elicitation.form'" in text_of(refused)


# ------------------------------------------- §Completion Notifications for URL Mode Elicitation
class Completions:
    def __init__(self) -> None:
        self.ids: list[str] = []

    async def __call__(self, elicitation_id: str) -> None:
        self.ids.append(elicitation_id)


async def test_url_elicitation_completion_reaches_the_client(connect: Connect) -> None:
    """elicitation.mdx §Completion Notifications for URL Mode Elicitation: the server sends
    ``notifications/elicitation/complete`` with the ``elicitationId`` once the out-of-band
    interaction ends (here from a later request); the client MUST ignore unknown ids."""
    done = Completions()
    handlers = ClientHandlers(elicitation=Elicitor("accept"), elicitation_complete=done)
    async with connect("full", handlers=handlers) as client:
        assert text_of(await client.call("elicit_url_later", {"elicitation_id": "e-9"})) == "accept"
        await client.call("finish_elicitation", {"elicitation_id": "never-asked"})
        await client.call("finish_elicitation", {"elicitation_id": "e-9"})
        await client.call("finish_elicitation", {"elicitation_id": "e-9"})  # already completed
    assert done.ids == ["e-9"]


@pytest.mark.memory_only
async def test_completion_needs_the_url_capability(connect: Connect) -> None:
    """elicitation.mdx §Capabilities: the completion belongs to URL mode; a form-only client
    is never sent one (the server refuses to make the notifier)."""
    handlers = ClientHandlers(elicitation=Elicitor("accept"), elicitation_modes=("form",))
    async with connect("full", handlers=handlers) as client:
        result = await client.call("finish_elicitation", {"elicitation_id": "x"})
    assert result.is_error is True and "'elicitation.url'" in text_of(result)


# ------------------------------------------------------ §URL Elicitation Required Error
async def test_url_elicitation_required_error(connect: Connect) -> None:
    """elicitation.mdx §URL Elicitation Required Error and §Error Handling: -32042 with the
    URL-mode elicitations to complete first; the client raises ``UrlElicitationRequired`` with
    them, and their completion notification reaches it."""
    done = Completions()
    handlers = ClientHandlers(elicitation=Elicitor("accept"), elicitation_complete=done)
    async with connect("full", handlers=handlers) as client:
        with pytest.raises(UrlElicitationRequired) as caught:
            await client.call("needs_authorization", {"elicitation_id": "auth-1"})
        await client.call("finish_elicitation", {"elicitation_id": "auth-1"})
    error = caught.value
    assert isinstance(error, PeerError) and error.code == URL_ELICITATION_REQUIRED == -32042
    (elicitation,) = error.elicitations
    assert elicitation.url == "https://example.com/connect?elicitationId=auth-1"
    assert elicitation.elicitation_id == "auth-1"
    assert done.ids == ["auth-1"]
