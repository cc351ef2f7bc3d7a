"""Who owns a task (issue 28): the scope a principal, a session or an anonymous caller gets,
and the caps that must hold whatever the scope (tasks.mdx §Task Isolation and Access Control,
§Resource Management; SEP-2663 §Security Implications)."""

from __future__ import annotations

from types import SimpleNamespace

from mcpbind.server import Principal
from mcpbind.server.principal import principal_key
from mcpbind.server.request_state import binding_for
from mcpbind.server.tasks import default_scope

# Two different callers whose issuer, subject and client run together into the same text
# when joined with spaces (the attack of issue 28 F16).
ALICE = Principal(subject="x y", issuer="alice")
MALLORY = Principal(subject="y", issuer="alice x")
CLIENT_SPLIT = (Principal(subject="a", client_id="b c"), Principal(subject="a b", client_id="c"))


def _ctx(principal: object, version: str = "2026-07-28") -> SimpleNamespace:
    return SimpleNamespace(principal=principal, protocol_version=version, peer=object())


def test_principals_whose_text_runs_together_get_different_task_scopes() -> None:
    for a, b in ((ALICE, MALLORY), CLIENT_SPLIT):
        assert a != b
        assert default_scope(_ctx(a)) != default_scope(_ctx(b))  # type: ignore[arg-type]
        assert default_scope(_ctx(a, "2025-11-25")) != default_scope(_ctx(b, "2025-11-25"))  # type: ignore[arg-type]


def test_principal_key_is_unambiguous_and_stable_across_refreshes() -> None:
    assert ALICE.key != MALLORY.key and str(ALICE) != str(MALLORY)
    refreshed = Principal(subject="x y", issuer="alice", scopes=frozenset({"more"}), expires_at=9)
    assert refreshed.key == ALICE.key
    # A Starlette-style identity string never meets a Principal's key.
    assert principal_key(ALICE.key) != principal_key(ALICE)


def test_request_state_binding_tells_the_two_principals_apart() -> None:
    params = {"name": "t", "arguments": {}}
    a = binding_for("tools/call", params, principal_key(ALICE))
    b = binding_for("tools/call", params, principal_key(MALLORY))
    assert a.principal != b.principal
