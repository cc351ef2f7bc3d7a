"""Host names: server/tools.mdx §Tool Names (2025-11-25): 1-128 characters of A-Z a-z 0-9 _ - .;
names from different servers never collide; host names also fit the LLM APIs' stricter rule
(A-Z a-z 0-9 _ -, at most 64), since tools_for_llm hands them to a model."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpbind.host import assign_names, host_name, is_portable_name, is_valid_tool_name


def test_same_tool_on_two_servers_stays_two_names() -> None:
    """tools.mdx §Tool Names: a tool `search` on `web` and `docs` is reachable as two names."""
    names = assign_names([("web", "search"), ("docs", "search")])
    assert names == {("docs", "search"): "docs__search", ("web", "search"): "web__search"}


def test_invalid_characters_and_length() -> None:
    """tools.mdx §Tool Names: disallowed characters are replaced (plus a hash so distinct
    originals stay distinct); names stay within 128 characters."""
    spaced = host_name("my server", "get user")
    assert re.fullmatch(r"my-server-[0-9a-f]{6}__get-user-[0-9a-f]{6}", spaced)
    assert host_name("my server", "get user") == spaced  # deterministic
    assert host_name("my server", "get_user") != host_name("my server", "get-user")
    long = host_name("s" * 100, "t" * 100)
    assert len(long) == 64 and is_portable_name(long)
    assert long != host_name("s" * 100, "t" * 99 + "u")


def test_spec_valid_dots_become_portable() -> None:
    """tools.mdx §Tool Names lists ``admin.tools.list`` as valid; LLM APIs refuse the dot, so
    the host name replaces it, with a hash that keeps it apart from ``admin-tools-list``."""
    dotted = host_name("srv", "admin.tools.list")
    assert re.fullmatch(r"srv__admin-tools-list-[0-9a-f]{6}", dotted)
    assert is_portable_name(dotted) and not is_portable_name("admin.tools.list")
    assert dotted != host_name("srv", "admin-tools-list") == "srv__admin-tools-list"
    assert host_name("v1.2", "x").startswith("v1-2-")


def test_underscores_cannot_fake_the_split() -> None:
    """tools.mdx §Tool Names (unique names): the separator `__` is unambiguous; server names with
    `_` at the edges or `__` inside get a hashed form, so ("a_", "b") and ("a", "_b") differ."""
    pairs = [("a_", "b"), ("a", "_b"), ("a__x", "y"), ("a", "x__y")]
    names = assign_names(pairs)
    assert len(set(names.values())) == 4
    assert names[("a", "_b")] == "a___b"


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=150)), max_size=12
    )
)
def test_names_are_valid_unique_and_deterministic(pairs: list[tuple[str, str]]) -> None:
    """tools.mdx §Tool Names for any server/tool names: valid (and portable), unique,
    order-independent."""
    names = assign_names(pairs)
    assert len(set(names.values())) == len(set(pairs))
    assert all(is_valid_tool_name(name) and is_portable_name(name) for name in names.values())
    assert assign_names(list(reversed(pairs))) == names
