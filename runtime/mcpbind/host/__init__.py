"""The Host: many MCP servers under one coordinator (2025-11-25 architecture §Host).

Configuration (:mod:`.config`, files and other hosts' shapes in :mod:`.config_file`), the public API and routing (:mod:`.host`), the per-server
supervisor (:mod:`.supervisor`), each server's record and transport (:mod:`.state`), the
aggregated catalog (:mod:`.catalog`), host names (:mod:`.naming`), the approval policy
(:mod:`.approval`) and the hooks that apply it (:mod:`.gate`); the Host as one MCP server
(:mod:`.gateway`, ``Host.as_server()``), which relays upstream asks to the calling client
(:mod:`.relay`) and forwards progress and errors (:mod:`.forwarding`); a remote server as a
``Server.mount`` source (:mod:`.remote`).
"""

from typing import TYPE_CHECKING

from .approval import TOOL_CALL_DENIED as TOOL_CALL_DENIED
from .approval import USER_REJECTED as USER_REJECTED
from .approval import ApprovalDenied as ApprovalDenied
from .approval import Approver as Approver
from .approval import AuditEntry as AuditEntry
from .approval import ElicitationHook as ElicitationHook
from .approval import Sampler as Sampler
from .approval import SamplingResultReviewer as SamplingResultReviewer
from .approval import SamplingReview as SamplingReview
from .approval import SamplingReviewer as SamplingReviewer
from .approval import ToolCallRequest as ToolCallRequest
from .approval import ToolCheck as ToolCheck
from .approval import approve_all as approve_all
from .approval import decide as decide
from .catalog import Catalog as Catalog
from .catalog import PromptEntry as PromptEntry
from .catalog import ResourceEntry as ResourceEntry
from .catalog import TemplateEntry as TemplateEntry
from .catalog import ToolEntry as ToolEntry
from .catalog import llm_tools as llm_tools
from .config import ApprovalPolicy as ApprovalPolicy
from .config import ConfigError as ConfigError
from .config import ConfigWarning as ConfigWarning
from .config import HostConfig as HostConfig
from .config import RootConfig as RootConfig
from .config import ServerConfig as ServerConfig
from .config_file import SERVER_KEYS as SERVER_KEYS
from .config_file import load_config as load_config
from .config_file import parse_config as parse_config
from .config_file import parse_server as parse_server
from .host import Host as Host
from .naming import assign_names as assign_names
from .naming import host_name as host_name
from .naming import is_portable_name as is_portable_name
from .naming import is_valid_tool_name as is_valid_tool_name
from .remote import RemoteSource as RemoteSource
from .state import AmbiguousResource as AmbiguousResource
from .state import Backoff as Backoff
from .state import Connector as Connector
from .state import HostError as HostError
from .state import HostEvent as HostEvent
from .state import ServerState as ServerState
from .state import ServerUnavailable as ServerUnavailable
from .state import UnknownName as UnknownName

if not TYPE_CHECKING:  # ``__all__`` and ``dir()``: the imports above are the list
    from .._lazy import lazy_package

    __getattr__, __dir__ = lazy_package(globals())
