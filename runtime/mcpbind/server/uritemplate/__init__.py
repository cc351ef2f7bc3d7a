"""RFC 6570 URI templates for MCP resource templates: ``syntax`` parses and expands, ``matching``
recovers the variables of a concrete URI, ``template`` holds ``UriTemplate`` and the semantics."""

from __future__ import annotations

from .syntax import (
    DEFAULT_MAX_TEMPLATE_LENGTH,
    DEFAULT_MAX_URI_LENGTH,
    DEFAULT_MAX_VARIABLES,
    UriTemplateError,
    UriTemplateMatch,
    UriTemplateValue,
)
from .template import UriTemplate

__all__ = [
    "DEFAULT_MAX_TEMPLATE_LENGTH",
    "DEFAULT_MAX_URI_LENGTH",
    "DEFAULT_MAX_VARIABLES",
    "UriTemplate",
    "UriTemplateError",
    "UriTemplateMatch",
    "UriTemplateValue",
]
