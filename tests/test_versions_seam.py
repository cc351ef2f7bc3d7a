"""The era seam: code that behaves differently per protocol version asks the version's
:class:`mcpbind.versions.Era` instead of comparing version strings, so the version literals live
in ``mcpbind/versions.py`` alone; and that module's era table says what each version's spec
says (the normative text in /work/shared/spec/<version>/, one page per feature)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpbind.output_schema import DRAFT_2020_12
from mcpbind.versions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    HEADERLESS_VERSION,
    LATEST_HANDSHAKE,
    STATELESS_VERSIONS,
    Era,
    era_of,
    is_stateless,
)

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime" / "mcpbind"
SPEC = Path("/work/shared/spec")

VERSION_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}")

#: String constants shaped like a protocol version that are not one: (path under
#: runtime/mcpbind, value) -> why. An entry that no longer occurs fails the suite too.
NOT_VERSIONS: dict[tuple[str, str], str] = {
    ("cli/host_form.py", "2026-07-28"): "an example date in the Host's form prompt, not a "
    "protocol version (tests/host/test_shell.py asserts the message)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string statements: docstrings of modules, classes and functions, and
    the attribute docstrings under assignments."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def version_literals(source: str) -> Iterator[tuple[int, str]]:
    """(line, value) of each string constant of ``source`` shaped like a protocol version,
    docstrings excluded (f-string parts included)."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skipped
            and VERSION_SHAPE.fullmatch(node.value)
        ):
            yield node.lineno, node.value


def test_the_scan_finds_a_version_literal_and_skips_docstrings() -> None:
    source = '''
"""A module about 2025-11-25."""
A = "2027-01-01"


def f(version: str) -> str:
    """2025-11-25 only."""
    return f"{version} and {'2024-11-05'}" if version != "2026-07-28" else "x"
'''
    assert sorted(version_literals(source)) == [
        (3, "2027-01-01"),
        (8, "2024-11-05"),
        (8, "2026-07-28"),
    ]


def test_no_protocol_version_literal_outside_versions_py() -> None:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        name = path.relative_to(RUNTIME).as_posix()
        if name == "versions.py":
            continue
        for line, value in version_literals(path.read_text()):
            found.setdefault((name, value), []).append(line)
    unexplained = {key: lines for key, lines in found.items() if key not in NOT_VERSIONS}
    assert unexplained == {}, "ask mcpbind.versions.era_of(version) instead of a version string"
    assert sorted(set(NOT_VERSIONS) - set(found)) == []  # stale entries


# ---------------------------------------------------------------- the table against the spec


def _page(version: str, page: str) -> str:
    path = SPEC / version / page
    return path.read_text() if path.exists() else ""


def _any_page(version: str, needle: str) -> bool:
    return any(needle in path.read_text() for path in (SPEC / version).rglob("*.mdx"))


needs_spec = pytest.mark.skipif(
    not SPEC.is_dir(), reason="the spec text (/work/shared/spec) is not on this machine"
)

#: Each feature of an Era -> (the spec page that says so, whether a version's text says it).
SPEC_SAYS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "stateless": (
        "server/discover.mdx, and no basic/lifecycle.mdx handshake",
        lambda v: (
            (SPEC / v / "server/discover.mdx").exists()
            and not (SPEC / v / "basic/lifecycle.mdx").exists()
        ),
    ),
    "input_rounds": (
        "basic/patterns/mrtr.mdx",
        lambda v: (SPEC / v / "basic/patterns/mrtr.mdx").exists(),
    ),
    "result_types": (
        "basic/index.mdx §Responses",
        lambda v: (
            "The `result` **MUST** include a `resultType` field" in _page(v, "basic/index.mdx")
        ),
    ),
    "tasks_extension": (
        "changelog.mdx and basic/versioning.mdx: tasks moved to io.modelcontextprotocol/tasks",
        lambda v: (
            _any_page(v, "io.modelcontextprotocol/tasks")
            and not (SPEC / v / "basic/utilities/tasks.mdx").exists()
        ),
    ),
    "batches": (
        "basic/index.mdx §Batching",
        lambda v: "### Batching" in _page(v, "basic/index.mdx"),
    ),
    "argument_errors_as_results": (
        "server/tools.mdx §Error Handling",
        lambda v: (
            re.search(
                r"\*\*Tool Execution Errors\*\*.*"
                r"(\n   - .*)*\n   - Input validation errors",
                _page(v, "server/tools.mdx"),
            )
            is not None
        ),
    ),
    "json_schema_2020_12": (
        "basic/index.mdx §JSON Schema Usage",
        lambda v: "it defaults to [JSON Schema 2020-12]" in _page(v, "basic/index.mdx"),
    ),
    "priming_events": (
        "basic/transports.mdx §Sending Messages to the Server",
        lambda v: (
            "prime the client to reconnect"
            in _page(v, "basic/transports.mdx") + _page(v, "basic/transports/streamable-http.mdx")
        ),
    ),
}


def test_every_feature_of_an_era_is_checked_against_the_spec() -> None:
    assert sorted(SPEC_SAYS) == sorted(f for f in Era._fields if f != "version")


@needs_spec
@pytest.mark.parametrize("feature", sorted(SPEC_SAYS))
@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_era_feature_is_what_the_spec_says(version: str, feature: str) -> None:
    page, says = SPEC_SAYS[feature]
    assert getattr(era_of(version), feature) is says(version), f"{version}/{page}"


@needs_spec
def test_the_versions_are_the_spec_revisions() -> None:
    """Each version has its spec revision (/work/shared/spec/<version>/), newest first."""
    revisions = [p.name for p in SPEC.iterdir() if VERSION_SHAPE.fullmatch(p.name)]
    assert list(ALL_VERSIONS) == sorted(revisions, reverse=True)


@needs_spec
def test_headerless_version_is_the_transport_page_s() -> None:
    """2025-06-18 basic/transports.mdx §Protocol Version Header: without the header the server
    SHOULD assume protocol version 2025-03-26 (2025-11-25 says the same)."""
    for version in ("2025-06-18", "2025-11-25"):
        text = " ".join(_page(version, "basic/transports.mdx").split())
        said = re.search(r"\*\*SHOULD\*\* assume protocol version `([\d-]+)`", text)
        assert said is not None and said.group(1) == HEADERLESS_VERSION


def _schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "schema" / version / "schema.json").read_text())
    return data


def _defs(version: str) -> dict[str, Any]:
    schema = _schema(version)
    defs: dict[str, Any] = schema.get("$defs") or schema["definitions"]
    return defs


#: The features the pinned JSON schemas (schema/<version>/schema.json, in every checkout the
#: suite runs in) show too -> whether a version's schema shows it.
SCHEMA_SHOWS: dict[str, Callable[[str], bool]] = {
    "stateless": lambda v: "DiscoverRequest" in _defs(v) and "InitializeRequest" not in _defs(v),
    "input_rounds": lambda v: "InputRequiredResult" in _defs(v),
    "result_types": lambda v: "resultType" in _defs(v)["Result"].get("properties", {}),
    "batches": lambda v: "JSONRPCBatchRequest" in _defs(v),
    "json_schema_2020_12": lambda v: _schema(v)["$schema"] == DRAFT_2020_12,
}


@pytest.mark.parametrize("feature", sorted(SCHEMA_SHOWS))
@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_era_feature_is_what_the_schema_shows(version: str, feature: str) -> None:
    assert getattr(era_of(version), feature) is SCHEMA_SHOWS[feature](version)


def test_the_eras_are_listed_newest_first() -> None:
    assert STATELESS_VERSIONS + HANDSHAKE_VERSIONS == ALL_VERSIONS
    assert list(ALL_VERSIONS) == sorted(ALL_VERSIONS, reverse=True)
    assert [era_of(v).version for v in ALL_VERSIONS] == list(ALL_VERSIONS)


@pytest.mark.parametrize("version", [None, "", "1999-01-01", "2099-12-31", "not a version"])
def test_no_or_an_unknown_version_has_the_newest_handshake_version_s_era(
    version: str | None,
) -> None:
    """2025-11-25 basic/lifecycle.mdx §Version Negotiation: a server that does not support the
    requested version answers with another it supports, the latest; before that (or with no
    session) nothing else is known."""
    assert era_of(version) == era_of(LATEST_HANDSHAKE)
    assert era_of(version).version == LATEST_HANDSHAKE
    assert is_stateless(version) is False


def test_is_stateless_is_the_era_s() -> None:
    assert [is_stateless(v) for v in ALL_VERSIONS] == [era_of(v).stateless for v in ALL_VERSIONS]
    assert [v for v in ALL_VERSIONS if is_stateless(v)] == list(STATELESS_VERSIONS)


def test_an_era_is_frozen() -> None:
    era = era_of(LATEST_HANDSHAKE)
    with pytest.raises(AttributeError):
        era.batches = True  # type: ignore[misc]
    assert era_of(LATEST_HANDSHAKE).batches is False
