"""What every fuzz target asserts about what a server wrote (see ``harness``)."""

from __future__ import annotations

import json

__all__ = ["Finding", "check_message", "request_ids"]


class Finding(AssertionError):
    """An invariant of the receive path broke for this input."""


def check_message(data: bytes, where: str) -> None:
    """``data`` is one JSON-RPC 2.0 message or a non-empty batch of them."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise Finding(f"{where}: not JSON: {exc}: {data[:200]!r}") from None
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
            raise Finding(f"{where}: not a JSON-RPC 2.0 message: {data[:200]!r}")
        error = item.get("error")
        if error is not None and not isinstance(error.get("code"), int):
            raise Finding(f"{where}: error without an integer code: {data[:200]!r}")


def request_ids(body: bytes) -> list[str | int]:
    """The ids of the well-formed requests in ``body`` (a message or a batch): each must get
    an answer. Empty when the body is not JSON, or cancels something (a cancelled request
    may go unanswered)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return []
    items = value if isinstance(value, list) else [value]
    if any(isinstance(i, dict) and i.get("method") == "notifications/cancelled" for i in items):
        return []
    ids: list[str | int] = []
    for item in items:
        if (
            isinstance(item, dict)
            and item.get("jsonrpc") == "2.0"
            and isinstance(item.get("method"), str)
            and isinstance(item.get("id"), str | int)
            and not isinstance(item.get("id"), bool)
            and isinstance(item.get("params", {}), dict | list)
        ):
            ids.append(item["id"])
    return ids
