"""The Host: many MCP servers under one coordinator (2025-11-25 architecture §Host).

Configuration (:mod:`.config`, files and other hosts' shapes in :mod:`.config_file`), the public API and routing (:mod:`.host`), the per-server
supervisor (:mod:`.supervisor`), each server's record and transport (:mod:`.state`), the
aggregated catalog (:mod:`.catalog`), host names (:mod:`.naming`), the approval policy
(:mod:`.approval`) and the hooks that apply it (:mod:`.gate`).
"""

from .approval import (
    USER_REJECTED,
    ApprovalDenied,
    Approver,
    AuditEntry,
    ElicitationHook,
    Sampler,
    SamplingResultReviewer,
    SamplingReview,
    SamplingReviewer,
    ToolCallRequest,
    ToolCheck,
    approve_all,
    decide,
)
from .catalog import Catalog, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry, llm_tools
from .config import (
    ApprovalPolicy,
    ConfigError,
    ConfigWarning,
    HostConfig,
    RootConfig,
    ServerConfig,
)
from .config_file import SERVER_KEYS, load_config, parse_config, parse_server
from .host import Host
from .naming import assign_names, host_name, is_portable_name, is_valid_tool_name
from .state import (
    AmbiguousResource,
    Backoff,
    Connector,
    HostError,
    HostEvent,
    ServerState,
    ServerUnavailable,
    UnknownName,
)

__all__ = [
    "USER_REJECTED",
    "AmbiguousResource",
    "ApprovalDenied",
    "ApprovalPolicy",
    "Approver",
    "AuditEntry",
    "Backoff",
    "Catalog",
    "ConfigError",
    "ConfigWarning",
    "Connector",
    "ElicitationHook",
    "Host",
    "HostConfig",
    "HostError",
    "HostEvent",
    "PromptEntry",
    "ResourceEntry",
    "RootConfig",
    "Sampler",
    "SamplingResultReviewer",
    "SamplingReview",
    "SamplingReviewer",
    "SERVER_KEYS",
    "ServerConfig",
    "ServerState",
    "ServerUnavailable",
    "TemplateEntry",
    "ToolCallRequest",
    "ToolCheck",
    "ToolEntry",
    "UnknownName",
    "approve_all",
    "assign_names",
    "decide",
    "host_name",
    "is_portable_name",
    "is_valid_tool_name",
    "llm_tools",
    "load_config",
    "parse_config",
    "parse_server",
]
