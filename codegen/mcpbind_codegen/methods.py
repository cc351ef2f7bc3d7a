"""The method table: which messages flow which way, their params and result, and what gates them.

Directions and kinds come from the schema's ``ClientRequest``/``ServerRequest``/... unions. The
capability that gates a method is protocol knowledge the schema does not encode, so it lives in
the two tables below; a method in neither table is generated ungated and reported by the CLI.
"""

from __future__ import annotations

from typing import Any, Literal

from .build import schema_definitions
from .model import Definition, Direction, Kind, Lit, MethodDef, Ref, StructDef
from .overrides import OverrideTracker

Owner = Literal["client", "server", "receiver"]

#: method -> (whose capabilities, path in them). "receiver" means the side that handles it.
GATED: dict[str, tuple[Owner, tuple[str, ...]]] = {
    "tools/list": ("server", ("tools",)),
    "tools/call": ("server", ("tools",)),
    "resources/list": ("server", ("resources",)),
    "resources/templates/list": ("server", ("resources",)),
    "resources/read": ("server", ("resources",)),
    "resources/subscribe": ("server", ("resources", "subscribe")),
    "resources/unsubscribe": ("server", ("resources", "subscribe")),
    "prompts/list": ("server", ("prompts",)),
    "prompts/get": ("server", ("prompts",)),
    "completion/complete": ("server", ("completions",)),
    "logging/setLevel": ("server", ("logging",)),
    "sampling/createMessage": ("client", ("sampling",)),
    "roots/list": ("client", ("roots",)),
    "elicitation/create": ("client", ("elicitation",)),
    "notifications/tools/list_changed": ("server", ("tools", "listChanged")),
    "notifications/resources/list_changed": ("server", ("resources", "listChanged")),
    "notifications/resources/updated": ("server", ("resources", "subscribe")),
    "notifications/prompts/list_changed": ("server", ("prompts", "listChanged")),
    "notifications/message": ("server", ("logging",)),
    "notifications/roots/list_changed": ("client", ("roots", "listChanged")),
    "notifications/elicitation/complete": ("client", ("elicitation", "url")),
    "tasks/get": ("receiver", ("tasks",)),
    "tasks/result": ("receiver", ("tasks",)),
    "tasks/list": ("receiver", ("tasks", "list")),
    "tasks/cancel": ("receiver", ("tasks", "cancel")),
}

#: Methods found in a schema but in neither table: generated ungated, and reported by the CLI so
#: that a new spec method gets a deliberate decision.
UNMAPPED: set[tuple[str, str]] = set()

#: Methods every peer must handle whatever it declared.
UNGATED = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/subscriptions/acknowledged",
        "notifications/tasks/status",
    }
)

_GROUPS: tuple[tuple[str, Direction, Kind], ...] = (
    ("ClientRequest", "client_to_server", "request"),
    ("ClientNotification", "client_to_server", "notification"),
    ("ServerRequest", "server_to_client", "request"),
    ("InputRequest", "server_to_client", "input_request"),
    ("ServerNotification", "server_to_client", "notification"),
)


def _members(defs: dict[str, Any], group: str) -> list[str]:
    node = defs.get(group)
    if node is None:
        return []
    if "anyOf" in node:
        return [m["$ref"].rsplit("/", 1)[1] for m in node["anyOf"]]
    if "$ref" in node:
        return [node["$ref"].rsplit("/", 1)[1]]
    return [group]  # a single message defined in place (2026-07-28 ClientNotification)


def _capability_path(
    src: dict[str, Any], owner: str, path: tuple[str, ...]
) -> tuple[str, ...] | None:
    """The longest prefix of ``path`` that the version's capabilities object declares."""
    node: Any = src.get(f"{owner.capitalize()}Capabilities", {})
    found: list[str] = []
    for key in path:
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        if key not in props:
            break
        found.append(key)
        node = props[key]
    return tuple(found) or None


def extract_methods(
    schema: dict[str, Any],
    defs: dict[str, Definition],
    version: str,
    tracker: OverrideTracker,
) -> list[MethodDef]:
    src = schema_definitions(schema)
    out: list[MethodDef] = []
    for group, direction, kind in _GROUPS:
        for name in _members(src, group):
            struct = defs.get(name)
            if not isinstance(struct, StructDef):
                raise ValueError(f"{version}: {group} member {name} is not an object")
            method = struct.tag if struct.tag_field == "method" else _method_const(struct)
            if not isinstance(method, str):
                raise ValueError(f"{version}: {name} has no constant `method`")
            params_type, params_required = _params(struct)
            result_type = (
                _result(name, direction, src, defs, tracker) if kind != "notification" else None
            )
            owner, cap = _gate(method, direction, src, version)
            out.append(
                MethodDef(
                    method=method,
                    direction=direction,
                    kind=kind,
                    message_type=name,
                    params_type=params_type,
                    params_required=params_required,
                    result_type=result_type,
                    wire_result_type=_wire_result(result_type, defs),
                    capability_owner=owner,
                    capability=cap,
                    versions=(version,),
                )
            )
    out.sort(key=lambda m: (m.direction, m.kind, m.method))
    return out


def _method_const(struct: StructDef) -> Any:
    for f in struct.fields:
        if f.wire == "method" and isinstance(f.type, Lit):
            return f.type.values[0]
    return None


def _params(struct: StructDef) -> tuple[str | None, bool]:
    for f in struct.fields:
        if f.wire == "params":
            return (f.type.name if isinstance(f.type, Ref) else None), f.required
    return None, False


def derive_result(
    request: str, direction: Direction, src: dict[str, Any], defs: dict[str, Definition]
) -> str | None:
    """The result of a request as the schema says it, or None where it does not.

    In order: a ``<Name>Result`` definition; the ``result`` of a ``<Name>ResultResponse``; else
    the empty result (``EmptyResult``, or the base ``Result``), where the union of results sent
    back in that direction (``ServerResult`` for a client's requests) has it as a member.
    """
    base = request.removesuffix("Request")
    if base + "Result" in defs:
        return base + "Result"
    response = defs.get(base + "ResultResponse")
    if isinstance(response, StructDef):
        for f in response.fields:
            if f.wire == "result" and isinstance(f.type, Ref):
                return f.type.name
    union = "ServerResult" if direction == "client_to_server" else "ClientResult"
    if {"EmptyResult", "Result"} & set(_members(src, union)):
        return "EmptyResult" if "EmptyResult" in defs else "Result"
    return None


def _result(
    request: str,
    direction: Direction,
    src: dict[str, Any],
    defs: dict[str, Definition],
    tracker: OverrideTracker,
) -> str:
    derived = derive_result(request, direction, src, defs)
    o = tracker.find("result", request)
    if o is not None and (o.value not in defs or o.value == derived):
        why = f"{o.value} is not defined" if o.value not in defs else "the schema says so already"
        tracker.mismatch(o, f"result {request} -> {o.value} ({tracker.version}): {why}")
    elif o is not None:
        return str(o.value)
    if derived is None:
        base = request.removesuffix("Request")
        raise ValueError(
            f"{tracker.version}: no result type for {request}: the schema has no {base}Result, "
            f"no {base}ResultResponse and no empty Result among the results of its direction; "
            "add a `result` override"
        )
    return derived


def _wire_result(result: str | None, defs: dict[str, Definition]) -> str | None:
    """The type of ``<Result>Response.result`` where it differs (2026-07-28's MRTR unions)."""
    if result is None:
        return None
    response = defs.get(result + "Response")
    if isinstance(response, StructDef):
        for f in response.fields:
            if f.wire == "result" and isinstance(f.type, Ref) and f.type.name != result:
                return f.type.name
    return None


def _gate(
    method: str, direction: Direction, src: dict[str, Any], version: str
) -> tuple[Literal["client", "server"] | None, tuple[str, ...] | None]:
    if method in UNGATED:
        return None, None
    if method not in GATED:
        UNMAPPED.add((version, method))
        return None, None
    owner, path = GATED[method]
    side: Literal["client", "server"]
    if owner == "receiver":
        side = "server" if direction == "client_to_server" else "client"
    else:
        side = owner
    cap = _capability_path(src, side, path)
    return (side, cap) if cap else (None, None)
