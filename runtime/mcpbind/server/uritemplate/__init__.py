"""RFC 6570 URI templates for MCP resource templates: ``syntax`` parses and expands, ``matching``
recovers the variables of a concrete URI, ``template`` holds ``UriTemplate`` and the semantics."""

from typing import TYPE_CHECKING

from .syntax import DEFAULT_MAX_TEMPLATE_LENGTH as DEFAULT_MAX_TEMPLATE_LENGTH
from .syntax import DEFAULT_MAX_URI_LENGTH as DEFAULT_MAX_URI_LENGTH
from .syntax import DEFAULT_MAX_VARIABLES as DEFAULT_MAX_VARIABLES
from .syntax import UriTemplateError as UriTemplateError
from .syntax import UriTemplateMatch as UriTemplateMatch
from .syntax import UriTemplateValue as UriTemplateValue
from .template import UriTemplate as UriTemplate

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
