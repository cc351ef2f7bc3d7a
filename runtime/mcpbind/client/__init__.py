"""The client: one isolated session with one server, in either protocol era.

``Client`` and ``ClientHandlers`` are what most code needs. By role: ``client`` (the ``Client``
class), ``handlers`` (what the client answers when the server asks), ``connect`` (what it
connects to), ``negotiation`` (the handshake, or the 2026-07-28 discover probe and fallback),
``outgoing_meta`` (the per-request ``_meta`` of 2026-07-28), ``pipeline`` (a 2026-07-28 request:
``_meta``, cache, input rounds, re-issue), ``cache``, ``tool_headers`` (``x-mcp-header`` over
HTTP), ``listen`` and ``subscription`` (``subscriptions/listen``), ``refresh``
(``refresh_lists``), ``tasks`` (the requestor side of tasks: ``start_task``, ``TaskHandle``).
The pipeline, listen, refresh and tasks are imported when first used, so ``from mcpbind import
Client`` stays cheap. The imports below are the one list of the public names
(``mcpbind._lazy.lazy_package``).

Negotiation, the pipeline, listen, refresh and tool headers never import ``client`` (no import
circle): each is handed what it needs (the connection, the ``OutgoingMeta``, the ``Pipeline``)
and reads its client through a declared Protocol (``PipelineOwner``, ``ListsOwner``);
``tests/client/test_collaborators.py`` drives each without a ``Client``. Tasks, functions of
a ``Client``, use its public API. None reads another class's underscore attributes.
"""

from typing import TYPE_CHECKING

from .client import Client as Client
from .handlers import ClientHandlers as ClientHandlers
from .negotiation import UnsupportedVersion as UnsupportedVersion

if TYPE_CHECKING:
    from .middleware import ClientMiddleware as ClientMiddleware
    from .middleware import OutgoingCall as OutgoingCall
    from .middleware import SendNext as SendNext
    from .subscription import Subscription as Subscription
    from .tasks import TaskHandle as TaskHandle
    from .tasks import TaskState as TaskState
    from .tasks import start_task as start_task
    from .telemetry import ClientTelemetry as ClientTelemetry
else:
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
