"""What a failing tool sends back (server/tools.mdx §Error Handling: a tool execution error
is a result with ``isError: true``), and which exceptions are a tool's failure at all.

The text the client (and its model) sees, the same rule as for resources and prompts:

- :class:`ToolExecutionError` (raised by the tool on purpose) and the SDK's own errors
  (``McpError`` subclasses such as a failed sampling request, ``LocalProtocolError``): their
  message, written for the model;
- anything else: ``"Internal error"``, unless the session runs with ``debug`` (then
  ``"ValueError: <text>"``): exception text can hold paths, SQL or secrets.

Any ``BaseException`` but cancellation counts: a tool that calls ``sys.exit()`` (say, it wraps
an argparse CLI) or raises ``KeyboardInterrupt`` fails its call, never the server.

An exception that is not a chosen message is logged with its traceback (``mcpbind.server``):
the client sees "Internal error", the server's operator sees why.
"""

from __future__ import annotations

from mcpbind_types import unified as t

from .._lazy import lazy_logger
from ..protocol.errors import LocalProtocolError, McpError

__all__ = ["ToolExecutionError", "tool_failure"]

logger = lazy_logger("mcpbind.server")


class ToolExecutionError(Exception):
    """Raise from a tool to fail the call with this message shown to the client's model."""


def tool_failure(exc: BaseException, debug: bool, name: str) -> t.CallToolResult:
    """The ``isError`` result for tool ``name`` that raised ``exc`` (logged unless chosen)."""
    if not isinstance(exc, (ToolExecutionError, McpError)):  # not a message chosen on purpose
        logger.error("tool %s failed", name, exc_info=exc)
    if isinstance(exc, (ToolExecutionError, McpError, LocalProtocolError)):
        text = str(exc) or type(exc).__name__
    elif debug:
        detail = str(exc)
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    else:
        text = "Internal error"
    return t.CallToolResult(content=[t.TextContent(text=text)], is_error=True)
