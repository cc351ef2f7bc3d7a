"""MkDocs hooks of the site (mkdocs.yml ``hooks:``).

Links of the generated types: their docstrings quote the MCP specification, whose links are
absolute paths of its own site (``/specification/2025-11-25/basic/index#meta``); on this site
they would be broken, so they are pointed at modelcontextprotocol.io.

Griffe's one warning about ``mcpbind.types.__all__`` is dropped:

``mcpbind.types`` builds its ``__all__`` as ``["UNSET", "UnsetType"] + unified.__all__``, which
griffe's static analysis cannot read ("Unsupported item"); the reference page inspects the module
instead (``force_inspection``) and ``tests/docs`` checks that every name is documented, so that
warning, and only it, would fail ``--strict`` for nothing."""

from __future__ import annotations

import logging
from typing import Any

IGNORED = "Unsupported item in mcpbind.types.__all__"


class _Quiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return IGNORED not in record.getMessage()


def on_startup(command: str, dirty: bool) -> None:
    for name in ("mkdocs.plugins.griffe", "griffe", "mkdocs.plugins.mkdocstrings"):
        logging.getLogger(name).addFilter(_Quiet())


SPEC_SITE = "https://modelcontextprotocol.io"


def on_page_content(html: str, **kwargs: Any) -> str:
    return html.replace('href="/specification/', f'href="{SPEC_SITE}/specification/')
