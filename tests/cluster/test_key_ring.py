"""The 2026-07-28 era across replicas: the ``requestState`` key ring (current key, previous
keys for rotation, an audience) and a multi-round request finishing on another worker
(basic/patterns/mrtr.mdx, Server Requirements and Security Considerations)."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest

from mcpbind import StatelessOptions
from mcpbind.server import ServerSession
from mcpbind.server.request_state import (
    InvalidRequestState,
    RequestBinding,
    RoundState,
    StateCodec,
)
from mcpbind.transports import memory_pair
from tests.stateless.helpers import Wire, accept

from .app import build
from .processes import haproxy, workers
from .wire import call

OLD = b"the-old-key-of-the-ring-32-bytes"
NEW = b"the-new-key-of-the-ring-32-bytes"
BINDING = RequestBinding("tools/call", "greet", "digest")


def _state() -> RoundState:
    return RoundState(BINDING, 0, 1, ["user_name"], {})


def _reason(codec: StateCodec, token: str) -> str:
    with pytest.raises(InvalidRequestState) as refused:
        codec.open(token, BINDING)
    return refused.value.reason


def test_previous_keys_open_but_never_seal() -> None:
    """Rotation: a state sealed under the old key still opens while the old key is in the
    ring; new states are sealed with the current key only; once the old key leaves the ring,
    its states are refused."""
    before = StateCodec(OLD, 60.0, audience="app").seal(_state())
    ring = StateCodec(NEW, 60.0, previous=(OLD,), audience="app")
    assert ring.open(before, BINDING).asked == ["user_name"]
    after = ring.seal(_state())
    assert _reason(StateCodec(OLD, 60.0, audience="app"), after) == "signature"
    assert StateCodec(NEW, 60.0, audience="app").open(after, BINDING).rounds == 1
    assert _reason(StateCodec(NEW, 60.0, audience="app"), before) == "signature"


def test_a_state_for_another_audience_is_refused() -> None:
    """mrtr.mdx, Security Considerations: a state minted for one server is refused by another
    even when both hold the same key."""
    token = StateCodec(NEW, 60.0, audience="billing").seal(_state())
    assert "another server" in _reason(StateCodec(NEW, 60.0, audience="search"), token)
    assert StateCodec(NEW, 60.0, audience="billing").open(token, BINDING).audience == "billing"


def test_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MCPBIND_STATE_KEYS``: base64 keys (either alphabet, padding optional), current first;
    an explicit ``secret`` wins and takes no previous key from it."""
    keys = [base64.urlsafe_b64encode(k).decode().rstrip("=") for k in (NEW, OLD)]
    monkeypatch.setenv("MCPBIND_STATE_KEYS", f"{keys[0]}, {keys[1]}")
    options = StatelessOptions()
    assert (options.secret, options.previous_secrets) == (NEW, (OLD,))
    explicit = StatelessOptions(secret=b"x" * 32)
    assert (explicit.secret, explicit.previous_secrets) == (b"x" * 32, ())
    monkeypatch.setenv("MCPBIND_STATE_KEYS", "not base64!")
    with pytest.raises(ValueError, match="MCPBIND_STATE_KEYS"):
        StatelessOptions()
    monkeypatch.setenv("MCPBIND_STATE_KEYS", base64.b64encode(b"short").decode())
    with pytest.raises(ValueError, match="at least 16 bytes"):
        StatelessOptions()
    monkeypatch.delenv("MCPBIND_STATE_KEYS")
    assert StatelessOptions().secret != StatelessOptions().secret  # random per process


async def _first_round(name: str, secret: bytes) -> str:
    """Round one of ``greet`` on a server named ``name``: its ``requestState``."""
    server = build(name)
    server.stateless = StatelessOptions(secret=secret)
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ServerSession(server, server_end).run)
        first = await Wire(client_end).result("tools/call", {"name": "greet"})
        await client_end.aclose()
        tg.cancel_scope.cancel()
    state: str = first["requestState"]
    return state


@pytest.mark.anyio
async def test_servers_sharing_a_key_refuse_each_others_state() -> None:
    """The audience defaults to the server's name: a state from server ``billing`` is
    refused by server ``search`` under the same key, accepted by another ``billing``."""
    token = await _first_round("billing", NEW)
    for name, code in (("search", -32602), ("billing", None)):
        server = build(name)
        server.stateless = StatelessOptions(secret=NEW)
        client_end, server_end = memory_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(ServerSession(server, server_end).run)
            params = {"name": "greet", "requestState": token}
            params["inputResponses"] = {"user_name": accept(name="Ada")}
            reply = await Wire(client_end).request("tools/call", params)
            await client_end.aclose()
            tg.cancel_scope.cancel()
        if code is None:
            assert reply["result"]["content"][0]["text"] == "Hello, Ada!"
        else:
            assert reply["error"]["code"] == code


def _two_rounds(url: str) -> tuple[list[str], dict[str, object]]:
    """``greet`` through the balancer: the input round, then the retry with the answer. The
    workers that answered each, and the final response."""
    with httpx.Client(timeout=10) as http:
        first_worker, first = call(http, url, 1, "greet", {})
        asked = first["result"]
        assert asked["resultType"] == "input_required"
        assert list(asked["inputRequests"]) == ["user_name"]
        retry = {
            "inputResponses": {"user_name": accept(name="Ada")},
            "requestState": asked["requestState"],
        }
        second_worker, second = call(http, url, 2, "greet", retry)
    return [first_worker, second_worker], second


def test_an_input_round_started_on_one_worker_completes_on_another(tmp_path: Path) -> None:
    """Two worker processes behind haproxy round-robin sharing ``MCPBIND_STATE_KEYS``: the
    retry of a multi-round request lands on the other worker and completes there. With a
    random key per worker (the single-process default) the same retry is refused."""
    keys = ",".join(base64.b64encode(k).decode() for k in (NEW, OLD))
    with workers(2, env={"MCPBIND_STATE_KEYS": keys}) as ports, haproxy(ports, tmp_path) as url:
        seen, answer = _two_rounds(url)
    assert seen[0] != seen[1] and set(seen) == {"w0", "w1"}
    assert answer["result"]["content"][0]["text"] == "Hello, Ada!"

    with workers(2, env={"MCPBIND_STATE_KEYS": ""}) as ports, haproxy(ports, tmp_path) as url:
        seen, answer = _two_rounds(url)
    assert seen[0] != seen[1]
    assert answer["error"]["code"] == -32602
