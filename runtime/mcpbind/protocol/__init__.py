"""The sans-I/O MCP protocol core (h11 style): no I/O, no transport, no anyio.

Feed inbound bytes to :meth:`Session.receive` and act on the returned events; every ``send_*``
call returns the bytes to write. See :mod:`mcpbind.protocol.core`.

Every name is imported from its module at its first use (a module ``__getattr__``), so code
that needs only the errors (a server's handlers, ``McpError``) does not import the session
machinery (issue 15, cold start). The imports below are the one list of the names
(``mcpbind._lazy.lazy_package``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .capabilities import has_capability as has_capability
    from .core import Session as Session
    from .core import SessionOptions as SessionOptions
    from .custom import custom_method as custom_method
    from .depth import DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH
    from .depth import exceeds_depth as exceeds_depth
    from .errors import CONNECTION_CLOSED as CONNECTION_CLOSED
    from .errors import HEADER_MISMATCH as HEADER_MISMATCH
    from .errors import INTERNAL_ERROR as INTERNAL_ERROR
    from .errors import INVALID_PARAMS as INVALID_PARAMS
    from .errors import INVALID_REQUEST as INVALID_REQUEST
    from .errors import METHOD_NOT_FOUND as METHOD_NOT_FOUND
    from .errors import MISSING_REQUIRED_CLIENT_CAPABILITY as MISSING_REQUIRED_CLIENT_CAPABILITY
    from .errors import PARSE_ERROR as PARSE_ERROR
    from .errors import REQUEST_TIMEOUT as REQUEST_TIMEOUT
    from .errors import RESOURCE_NOT_FOUND as RESOURCE_NOT_FOUND
    from .errors import UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED_PROTOCOL_VERSION
    from .errors import URL_ELICITATION_REQUIRED as URL_ELICITATION_REQUIRED
    from .errors import LocalProtocolError as LocalProtocolError
    from .errors import McpError as McpError
    from .errors import RemoteProtocolError as RemoteProtocolError
    from .errors import UrlElicitationRequired as UrlElicitationRequired
    from .errors import error_for_exception as error_for_exception
    from .events import Cancelled as Cancelled
    from .events import ErrorReceived as ErrorReceived
    from .events import Event as Event
    from .events import NotificationReceived as NotificationReceived
    from .events import Outgoing as Outgoing
    from .events import ProgressReceived as ProgressReceived
    from .events import RequestId as RequestId
    from .events import RequestReceived as RequestReceived
    from .events import ResponseReceived as ResponseReceived
    from .state import State as State
    from .state import Transition as Transition
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
