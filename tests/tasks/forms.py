"""The elicitation form the task test tools ask with."""

from __future__ import annotations

from mcpbind import types as t

__all__ = ["ask_name"]


def ask_name() -> t.ElicitRequestFormParams:
    """``Name?``: one string field, ``name``."""
    return t.ElicitRequestFormParams(
        message="Name?",
        requested_schema=t.ElicitRequestFormParamsRequestedSchema(
            type="object", properties={"name": t.StringSchema(type="string")}
        ),
    )
