"""basic/index.mdx §_meta: the per-request fields merged into a request's params by
``with_meta``, on each kind of params (a Struct copied with its ``meta`` set, a frozen one
replaced, a mapping, none), the caller's params left as they were."""

from __future__ import annotations

from typing import Any

import msgspec

from mcpbind import types as t
from mcpbind.protocol import meta as meta_module
from mcpbind.protocol.meta import PROTOCOL_VERSION, with_meta
from mcpbind_types.unified import methods as m

FIELDS = {PROTOCOL_VERSION: "2026-07-28"}
ENCODED = msgspec.Raw(msgspec.json.encode(FIELDS))


class FrozenParams(msgspec.Struct, frozen=True):
    name: str
    meta: Any = msgspec.field(default=msgspec.UNSET, name="_meta")


def test_struct_params_are_copied_with_the_encoded_meta() -> None:
    params = t.CallToolRequestParams(name="echo", arguments={"text": "x"})
    sent = with_meta(m.C2S_CALL_TOOL, params, FIELDS, ENCODED)
    again = with_meta(m.C2S_CALL_TOOL, params, FIELDS, ENCODED)
    assert sent is not params and again is not sent
    assert sent.meta is ENCODED and params.meta is msgspec.UNSET
    assert meta_module._SETTABLE_META[t.CallToolRequestParams] is True  # one entry per type


def test_own_meta_keys_win_and_stay_the_callers() -> None:
    own = {"com.example/trace": "t1", PROTOCOL_VERSION: "mine"}
    params = t.CallToolRequestParams(name="echo", meta=own)
    sent = with_meta(m.C2S_CALL_TOOL, params, FIELDS, ENCODED)
    assert sent.meta == own and sent.meta is not own
    assert params.meta is own


def test_frozen_struct_params_are_replaced() -> None:
    params = FrozenParams(name="echo")
    sent = with_meta(m.C2S_CALL_TOOL, params, FIELDS, ENCODED)
    assert type(sent) is FrozenParams and sent.meta is ENCODED and params.meta is msgspec.UNSET
    assert meta_module._SETTABLE_META[FrozenParams] is False


def test_mappings_and_no_params() -> None:
    assert with_meta(m.C2S_CALL_TOOL, {"name": "echo"}, FIELDS, ENCODED) == {
        "name": "echo",
        "_meta": ENCODED,
    }
    assert with_meta(m.C2S_CALL_TOOL, {"_meta": {"k": 1}}, FIELDS, ENCODED) == {
        "_meta": {**FIELDS, "k": 1}
    }
    assert dict not in meta_module._SETTABLE_META  # only Struct types are planned
    listed = with_meta(m.C2S_LIST_TOOLS, None, FIELDS, ENCODED)
    assert getattr(listed, "meta", None) is ENCODED or listed == {"_meta": ENCODED}
