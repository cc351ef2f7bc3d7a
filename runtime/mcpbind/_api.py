"""The public API of mcpbind, declared in one place: the ``__all__`` of each module of
:data:`PUBLIC_MODULES`. Modules not listed here are internal and may change.

Each public module has its page in the API reference (docs/reference/api, which documents every
name of its ``__all__``); the README, the documentation and the examples import from these
modules alone (tests/test_public_api.py and tests/docs check all of it). The modules that are
not listed are the homes of those names and the machinery behind them: they declare
``__all__`` too, for their neighbours inside mcpbind, not for users.

What is public, and why:

- ``mcpbind``: what most programs need (``Server``, ``Client``, the errors, the versions).
- ``mcpbind.types``: the protocol types (the generated ``mcpbind_types`` package is read
  through it, never imported by users).
- ``mcpbind.server`` and ``mcpbind.server.tasks``: writing a server, and tasks on it.
- ``mcpbind.client``: the client, its handlers, the requestor side of tasks.
- ``mcpbind.http``: both ends of Streamable HTTP and of the 2024-11-05 HTTP+SSE transport;
  ``mcpbind.http.server`` and ``mcpbind.http.client`` are where those names live, not a second
  place to import them from.
- ``mcpbind.auth.client`` and ``mcpbind.auth.server``: OAuth on each side (``mcpbind.auth``
  itself holds no names).
- ``mcpbind.host`` and ``mcpbind.host.tasks``: the Host.
- ``mcpbind.tasks``: the task stores and records.
- ``mcpbind.transports``: the transport protocol, stdio and the in-memory pair.
- ``mcpbind.bindings``: what the wrappers written by ``mcpbind bind`` import.
- ``mcpbind.versions``: the protocol versions and eras.

Internal: the sans-I/O core (``mcpbind.protocol``: ``mcpbind`` exports its ``McpError`` and
``UrlElicitationRequired``; ``SessionOptions``, the type of ``session_options=``, is still
imported from it until ``mcpbind`` exports it too), ``mcpbind.connection`` (its errors are
exported by ``mcpbind``), ``mcpbind.launch``, the command line's modules (``mcpbind.cli``: the
commands are its interface, documented in docs/reference/cli.md) and every submodule of the
packages above.
"""

__all__ = ["PUBLIC_MODULES"]

#: The public modules, in the order of the API reference.
PUBLIC_MODULES: tuple[str, ...] = (
    "mcpbind",
    "mcpbind.types",
    "mcpbind.server",
    "mcpbind.server.tasks",
    "mcpbind.client",
    "mcpbind.http",
    "mcpbind.auth.client",
    "mcpbind.auth.server",
    "mcpbind.host",
    "mcpbind.host.tasks",
    "mcpbind.tasks",
    "mcpbind.transports",
    "mcpbind.bindings",
    "mcpbind.versions",
)
