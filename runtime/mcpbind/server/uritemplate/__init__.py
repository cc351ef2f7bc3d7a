"""RFC 6570 URI templates for MCP resource templates: ``_syntax`` parses and expands, ``_matching``
recovers the variables of a concrete URI, ``_template`` holds ``UriTemplate`` and the semantics."""

from typing import TYPE_CHECKING

from ._syntax import DEFAULT_MAX_TEMPLATE_LENGTH as DEFAULT_MAX_TEMPLATE_LENGTH
from ._syntax import DEFAULT_MAX_URI_LENGTH as DEFAULT_MAX_URI_LENGTH
from ._syntax import DEFAULT_MAX_VARIABLES as DEFAULT_MAX_VARIABLES
from ._syntax import UriTemplateError as UriTemplateError
from ._syntax import UriTemplateMatch as UriTemplateMatch
from ._syntax import UriTemplateValue as UriTemplateValue
from ._template import UriTemplate as UriTemplate

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from ..._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
