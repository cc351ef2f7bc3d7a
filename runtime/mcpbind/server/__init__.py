"""The server side: ``Server`` (decorators), ``Context`` (for handlers), and ``serve``.

The session (``ServerSession``, ``serve``, ``serve_stdio``: dispatch, the 2026-07-28 input
rounds, listen streams) is imported when first used, so ``from mcpbind import Server`` stays
cheap (issue 15, cold start). The imports below are the one list of the public names
(``mcpbind._lazy.lazy_package``).
"""

from typing import TYPE_CHECKING

from .app import Server as Server
from .context import Context as Context
from .principal import Principal as Principal
from .tool_errors import ToolExecutionError as ToolExecutionError

if TYPE_CHECKING:
    from .builtin_middleware import ErrorReport as ErrorReport
    from .builtin_middleware import RateLimit as RateLimit
    from .builtin_middleware import Timing as Timing
    from .middleware import IncomingCall as IncomingCall
    from .middleware import Middleware as Middleware
    from .middleware import Next as Next
    from .session import ServerSession as ServerSession
    from .session import serve as serve
    from .session import serve_stdio as serve_stdio
    from .telemetry import ServerTelemetry as ServerTelemetry
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
