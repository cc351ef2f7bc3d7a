"""Method-table rows for methods outside the generated tables: custom and vendor methods, and
the task-augmented forms of generated ones."""

from __future__ import annotations

from typing import Any, Literal

from mcpbind_types._common import MethodInfo

__all__ = ["custom_method"]


def custom_method(
    method: str,
    direction: Literal["client_to_server", "server_to_client"],
    kind: Literal["request", "notification"] = "request",
) -> MethodInfo[dict[str, Any], Any]:
    """A method-table row for a custom method: params are a JSON object, the result any JSON."""
    return MethodInfo(
        method=method,
        direction=direction,
        kind=kind,
        message_type=None,
        params_type=dict[str, Any],
        params_required=False,
        result_type=Any if kind == "request" else None,
        wire_result_type=Any if kind == "request" else None,
        capability_owner=None,
        capability=None,
        versions=(),
    )
