"""Checking a tool's structured content against its output schema, as ``Client.call`` does.

server/tools.mdx §Output Schema: "Clients SHOULD validate structured results against this
schema". ``Client.call`` always does (``check_output=False`` opts out per call), with the
``jsonschema`` library, a dependency of mcpbind imported on the first check only: a check
that is skipped when a package happens to be missing is a check nobody can rely on, and the
official SDKs validate unconditionally too.

The dialect (basic/index.mdx §JSON Schema Usage, 2025-11-25): a schema's ``$schema`` names it;
without one it is JSON Schema 2020-12 from protocol version 2025-11-25 on. Earlier versions
name no default; their own schema is written in draft-07, which is used for them. Supported
dialects: draft-04, draft-06, draft-07, 2019-09 and 2020-12; any other ``$schema`` is refused
with an error naming it, as the spec asks. ``format`` is an annotation, not asserted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpbind_types import unified as t
from mcpbind_types._common import json_value

from .protocol import INVALID_PARAMS, McpError
from .versions import era_of

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["DRAFT_07", "DRAFT_2020_12", "OutputSchema", "default_dialect"]

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"


def default_dialect(protocol_version: str | None) -> str:
    """The dialect of a schema without ``$schema`` under ``protocol_version``."""
    return DRAFT_2020_12 if era_of(protocol_version).json_schema_2020_12 else DRAFT_07


def _key(uri: str) -> str:
    """``http(s)://json-schema.org/draft-07/schema[#]`` -> ``json-schema.org/draft-07/schema``."""
    return uri.strip().rstrip("#").removeprefix("https://").removeprefix("http://")


def _validator_class(dialect: str) -> type[Validator] | None:
    try:
        import jsonschema
    except ImportError:
        raise ModuleNotFoundError(
            "checking structured tool output needs jsonschema, a dependency of mcpbind: "
            "pip install jsonschema (or pass check_output=False)"
        ) from None
    classes: tuple[type[Validator], ...] = (
        jsonschema.Draft4Validator,
        jsonschema.Draft6Validator,
        jsonschema.Draft7Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft202012Validator,
    )
    wanted = _key(dialect)
    for cls in classes:
        meta = cls.META_SCHEMA
        if _key(str(meta.get("$id", meta.get("id", "")))) == wanted:
            return cls
    return None


class OutputSchema:
    """One tool's output schema. On the first :meth:`check` it is checked for validity in its
    dialect and compiled; every check raises ``McpError`` (-32602) naming the tool."""

    __slots__ = ("_validator", "dialect", "schema", "tool")

    def __init__(self, tool: str, schema: dict[str, Any], protocol_version: str | None) -> None:
        self.tool = tool
        self.schema = schema
        declared = schema.get("$schema")
        self.dialect = declared if isinstance(declared, str) else default_dialect(protocol_version)
        self._validator: Validator | None = None

    def _compile(self) -> Validator:
        cls = _validator_class(self.dialect)
        if cls is None:
            raise McpError(
                INVALID_PARAMS,
                f"Tool {self.tool} output schema uses an unsupported JSON Schema dialect "
                f"{self.dialect!r} (supported: draft-04, draft-06, draft-07, 2019-09, 2020-12)",
            )
        import jsonschema

        try:
            cls.check_schema(self.schema)
        except jsonschema.SchemaError as exc:
            raise McpError(
                INVALID_PARAMS, f"Tool {self.tool} output schema is not valid: {exc.message}"
            ) from None
        self._validator = cls(self.schema)
        return self._validator

    def check(self, result: t.CallToolResult) -> None:
        content = result.structured_content
        if isinstance(content, msgspec.UnsetType):
            raise McpError(
                INVALID_PARAMS,
                f"Tool {self.tool} declares an output schema but returned no structured content",
            )
        validator = self._validator or self._compile()
        errors = sorted(validator.iter_errors(json_value(content)), key=str)
        if errors:
            path = "$" + "".join(f"[{p!r}]" for p in errors[0].absolute_path)
            raise McpError(
                INVALID_PARAMS,
                f"Tool {self.tool} structured content does not match its output "
                f"schema at {path}: {errors[0].message}",
            )
