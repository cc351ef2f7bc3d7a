"""RFC 6570 URI templates for MCP resource templates (see ``template`` for the semantics)."""

from __future__ import annotations

from .template import (
    DEFAULT_MAX_TEMPLATE_LENGTH,
    DEFAULT_MAX_URI_LENGTH,
    DEFAULT_MAX_VARIABLES,
    UriTemplate,
    UriTemplateError,
    UriTemplateMatch,
    UriTemplateValue,
)

__all__ = [
    "DEFAULT_MAX_TEMPLATE_LENGTH",
    "DEFAULT_MAX_URI_LENGTH",
    "DEFAULT_MAX_VARIABLES",
    "UriTemplate",
    "UriTemplateError",
    "UriTemplateMatch",
    "UriTemplateValue",
]
