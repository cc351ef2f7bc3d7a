"""Bad input to the bearer check never escapes as an exception (brief: bad input never crashes
a session): arbitrary Authorization and DPoP headers, request bodies and tokens end in a
refusal, never a 500. Property tests over the parsing the check does before any crypto."""

from __future__ import annotations

import asyncio
import contextlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc.jwk import KeySet
from server_support import ISSUER, RESOURCE

from mcpbind import Server
from mcpbind.auth.server import InvalidToken, JWTVerifier
from mcpbind.auth.server.bearer import _credentials
from mcpbind.auth.server.dpop import DPoPChecker, InvalidProof
from mcpbind.auth.server.scopes import required_scopes

_SERVER = Server("fuzz")


@_SERVER.tool(scopes=["a"])
def tool() -> str:
    return ""


@_SERVER.resource_template("files://{name}", scopes=["b"])
def file(name: str) -> str:
    return name


_header = st.binary(max_size=200)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"authorization", b"dpop", b"x"]), _header), max_size=4))
def test_credentials_parse_any_headers(headers: list[tuple[bytes, bytes]]) -> None:
    found = _credentials(headers, dpop=True)
    if found is not None:
        scheme, token, _proofs = found
        assert scheme in ("bearer", "dpop") and token


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=8), inner, max_size=3)
            ),
            max_leaves=10,
        ).map(lambda v: json.dumps(v).encode()),
        st.sampled_from(
            [
                b'{"method":"tools/call","params":{"name":"tool"}}',
                b'{"method":"tools/call","params":[1,2]}',
                b'{"method":"resources/read","params":{"uri":"files://x"}}',
                b'[{"method":"tools/call","params":{"name":7}}, 5]',
            ]
        ),
    )
)
def test_required_scopes_of_any_body(body: bytes) -> None:
    assert required_scopes(_SERVER, body) <= {"a", "b"}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_token_or_proof_is_refused_cleanly(text: str) -> None:
    verifier = JWTVerifier("https://auth.example.com/jwks", issuer=ISSUER)
    verifier._keys = KeySet([])  # an empty key set, fresh: nothing is fetched
    verifier._fetched_at = 1e18
    with contextlib.suppress(InvalidToken):
        asyncio.run(verifier.verify(text, RESOURCE))
    try:
        DPoPChecker().check(text, method="POST", url=RESOURCE, token="t", jkt="k")
    except InvalidProof:
        pass
    else:
        raise AssertionError("an arbitrary proof was accepted")


def test_credentials_trim_only_http_whitespace() -> None:
    """RFC 9110 §5.5: a field value's surrounding whitespace is SP and HTAB, nothing else. A
    no-break space (0xA0, which ``str.strip`` also removes) around the scheme made the check
    accept ``Authorization:<NBSP>DPoP <token>``, a header an intermediary reads as having no
    known scheme (found by ``make fuzz``'s authorization target)."""
    assert _credentials([(b"authorization", b" \tBearer abc \t")], dpop=True) == (
        "bearer",
        "abc",
        [],
    )
    for value in (b"\xa0Bearer abc", b"\xa0DPoP abc", b"Bearer\xa0abc", b"\x0bBearer abc"):
        assert _credentials([(b"authorization", value)], dpop=True) is None, value
    found = _credentials([(b"authorization", b"Bearer abc\xa0")], dpop=True)
    assert found is None or found[1] != "abc"  # kept in the token, which then fails to verify
    proofs = _credentials([(b"authorization", b"DPoP abc"), (b"dpop", b"\xa0p\xa0")], dpop=True)
    assert proofs is not None and proofs[2] == ["\xa0p\xa0"]
