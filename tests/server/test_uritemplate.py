"""Tests for ``mcpbind.server.uritemplate``: RFC 6570 URI templates for MCP resource templates.

Covers RFC 6570 expansion (the RFC's own examples for levels 1-4, §1.2 and §3.2), template
validation, and matching concrete URIs back to template arguments as an MCP server must for
``resources/read`` (MCP spec 2025-11-25, ``server/resources.mdx`` §Resource Templates):
MCP-style templates, ambiguity rules, percent-decoding, limits, linear-time behaviour on
adversarial input, and Hypothesis round-trip / differential properties.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpbind.server.uritemplate import (
    DEFAULT_MAX_URI_LENGTH,
    UriTemplate,
    UriTemplateError,
    UriTemplateMatch,
    UriTemplateValue,
)

# RFC 6570 §3.2 variable assignments (used by §1.2 and §3.2 examples).
RFC_VALUES: dict[str, UriTemplateValue] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# RFC 6570 §1.2, levels 1-4 (also uritemplate-test spec-examples.json).
LEVEL_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# RFC 6570 §3.2.1-§3.2.9 examples not already listed above.
SECTION_3_2_EXAMPLES = [
    # §3.2.1 Variable Expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # §3.2.2 Simple String Expansion
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    # §3.2.3 Reserved Expansion
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    # §3.2.4 Fragment Expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    # §3.2.5 Label Expansion with Dot-Prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # §3.2.6 Path Segment Expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    # §3.2.7 Path-Style Parameter Expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    # §3.2.8 Form-Style Query Expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    # §3.2.9 Form-Style Query Continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
]


# ---------------------------------------------------------------------------- expansion


@pytest.mark.parametrize(("template", "expected"), LEVEL_EXAMPLES)
def test_rfc_level_examples_expand(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


@pytest.mark.parametrize(("template", "expected"), SECTION_3_2_EXAMPLES)
def test_rfc_section_3_2_examples_expand(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        # uritemplate-test extended-tests.json
        (
            "{/id*}{?fields,token}",
            {"id": ["person", "albums"], "fields": ["id", "name"]},
            "/person/albums?fields=id,name",
        ),
        ("/test{/Some%20Thing}", {"Some%20Thing": "foo"}, "/test/foo"),
        (
            "/lookup{?Stra%C3%9Fe}",
            {"Stra%C3%9Fe": "Grüner Weg"},
            "/lookup?Stra%C3%9Fe=Gr%C3%BCner%20Weg",
        ),
        ("/service{?word}", {"word": "drücken"}, "/service?word=dr%C3%BCcken"),
        ("{+id}", {"id": "admin%2F"}, "admin%2F"),
        ("{#id}", {"id": "admin%2F"}, "#admin%2F"),
        ("{id}", {"id": "admin%2F"}, "admin%252F"),
        ("{+not_pct}", {"not_pct": "%foo"}, "%25foo"),
        ("{+list}", {"list": ["red%25", "%2Fgreen", "blue "]}, "red%25,%2Fgreen,blue%20"),
        ("{list}", {"list": ["red%25", "%2Fgreen", "blue "]}, "red%2525,%252Fgreen,blue%20"),
        ("{/empty_list}", {"empty_list": []}, ""),
        ("{?empty_assoc*}", {"empty_assoc": {}}, ""),
        ("{?german*}", {"german": {"11": "elf", "12": "zwölf"}}, "?11=elf&12=zw%C3%B6lf"),
        (
            "{?id,token}{&keys*}",
            {"id": "admin", "token": "1", "keys": {"k1": "v1"}},
            "?id=admin&token=1&k1=v1",
        ),
        # explode of a mapping with an empty value: named -> ifemp, unnamed -> "k="
        ("{?m*}", {"m": {"a": "", "b": "1"}}, "?a=&b=1"),
        ("{;m*}", {"m": {"a": "", "b": "1"}}, ";a;b=1"),
        ("{m*}", {"m": {"a": ""}}, "a="),
        ("{;list*}", {"list": ["", "x"]}, ";list;list=x"),
        # literals outside U+R are percent-encoded (UTF-8); triplets are kept
        ("caf\u00e9/{x}", {"x": "1"}, "caf%C3%A9/1"),
        ("a%2Fb/{x}", {"x": "1"}, "a%2Fb/1"),
        ("no-expressions", {}, "no-expressions"),
        ("", {}, ""),
    ],
)
def test_expand_extra(template: str, values: Mapping[str, UriTemplateValue], expected: str) -> None:
    assert UriTemplate(template).expand(values) == expected


def test_expand_keywords_and_undefined() -> None:
    t = UriTemplate("file:///{path}{?v}")
    assert t.expand(path="a b") == "file:///a%20b"
    assert t.expand({"path": "x"}, v="2") == "file:///x?v=2"
    assert t.expand({"path": "x", "v": None}) == "file:///x"
    assert t.expand() == "file:///"
    assert t.expand({"path": "x"}, path="y") == "file:///y"  # keywords win


def test_expand_prefix_on_composite_value_is_an_error() -> None:
    # uritemplate-test negative-tests.json: "{keys:1}", "{+keys:1}"
    for template in ("{keys:1}", "{+keys:1}", "{list:2}"):
        with pytest.raises(UriTemplateError, match="prefix"):
            UriTemplate(template).expand(RFC_VALUES)


def test_expand_rejects_wrong_value_types() -> None:
    t = UriTemplate("{x}")
    with pytest.raises(TypeError):
        t.expand({"x": 5})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        t.expand({"x": [1, 2]})  # type: ignore[list-item]
    with pytest.raises(TypeError):
        t.expand({"x": {"a": 1}})  # type: ignore[dict-item]


# ----------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "template",
    [
        # uritemplate-test negative-tests.json
        "{/id*",
        "/id*}",
        "{/?id}",
        "{var:prefix}",
        "{hello:2*}",
        "{??hello}",
        "{!hello}",
        "{=path}",
        "{$var}",
        "{|var*}",
        "{*keys?}",
        "{?empty=default,var}",
        "{var}{-prefix|/-/|var}",
        "?q={searchTerms}&amp;c={example:color?}",
        "x{?empty|foo=none}",
        "/h{#hello+}",
        "/h#{hello+}",
        "{;keys:1*}",
        "?{-join|&|var,list}",
        "/people/{~thing}",
        "/sparql{?query){&default-graph-uri*}",
        "/resolution{?x, y}",
        # more
        "{}",
        "{+}",
        "{x,}",
        "{,x}",
        "{x,,y}",
        "{x:0}",
        "{x:01}",
        "{x:10000}",
        "{x:}",
        "{x*:3}",
        "{x**}",
        "{.x.}",
        "{x..y}",
        "{.}",
        "{a{b}}",
        "{a{b}",
        "a}b",
        "{x",
        "file:///{path",
        "100%",
        "%zz{x}",
        "%4{x}",
        "a b/{x}",
        "a\tb/{x}",
        "<{x}>",
        "{@x}",
        "{,}",
        "{x }",
        "{%zz}",
        "{x-y}",
    ],
)
def test_invalid_templates_are_rejected(template: str) -> None:
    with pytest.raises(UriTemplateError):
        UriTemplate(template)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{x", "unclosed"),
        ("x}", "unmatched"),
        ("{a{b}}", "nested"),
        ("{}", "empty expression"),
        ("{x,}", "empty variable name"),
        ("{!x}", "reserved"),
        ("{x:0}", "prefix length"),
        ("{x:3*}", "prefix and explode"),
        ("{x-y}", "invalid variable name"),
        ("a b{x}", "not allowed"),
        ("%g0{x}", "percent-encoded"),
    ],
)
def test_invalid_template_messages(template: str, message: str) -> None:
    with pytest.raises(UriTemplateError, match=message) as info:
        UriTemplate(template)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "template",
    [
        "",
        "plain://uri",
        "{x.y}",
        "{Stra%C3%9Fe}",
        "{x:9999}",
        "{_}",
        "{a1,b2*,c:3}",
        "{/a}{/b}{?c}{&d}{#e}",
        "caf\u00e9/{x}",
        "a%2Fb{x}",
        "[{x}]:{+y}!$&()*+,;=@~",
    ],
)
def test_valid_templates(template: str) -> None:
    t = UriTemplate(template)
    assert t.template == template
    assert str(t) == template


def test_template_length_limit() -> None:
    UriTemplate("a" * 2048)
    with pytest.raises(UriTemplateError, match="limit"):
        UriTemplate("a" * 2049)
    with pytest.raises(UriTemplateError, match="limit"):
        UriTemplate("x://{a}", max_length=6)
    assert UriTemplate("x://{a}", max_length=7).variables == ("a",)


def test_variable_count_limit() -> None:
    many = "".join(f"{{v{i}}}/" for i in range(64))
    assert len(UriTemplate(many).variables) == 64
    with pytest.raises(UriTemplateError, match="more than 64 variables"):
        UriTemplate(many + "{extra}")
    with pytest.raises(UriTemplateError, match="more than 2 variables"):
        UriTemplate("{a,b,c}", max_variables=2)


def test_template_must_be_str() -> None:
    with pytest.raises(TypeError):
        UriTemplate(b"{x}")  # type: ignore[arg-type]


def test_variables_equality_and_repr() -> None:
    t = UriTemplate("repo://{owner}/{repo}{/path*}{?ref,owner}")
    assert t.variables == ("owner", "repo", "path", "ref")
    assert t == UriTemplate("repo://{owner}/{repo}{/path*}{?ref,owner}")
    assert t != UriTemplate("repo://{owner}")
    assert t != "repo://{owner}/{repo}{/path*}{?ref,owner}"
    assert len({t, UriTemplate(t.template)}) == 1
    assert repr(t) == "UriTemplate('repo://{owner}/{repo}{/path*}{?ref,owner}')"


# ---------------------------------------------------------------- matching: MCP examples


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        # The spec's own example template.
        ("file:///{path}", "file:///readme.md", {"path": "readme.md"}),
        ("file:///{path}", "file:///a%2Fb", {"path": "a/b"}),
        ("file:///{path}", "file:///", {"path": ""}),
        ("file:///{path}", "file:///a/b", None),  # simple variables never match '/'
        ("file:///{path}", "file:///a?b", None),
        ("file:///{path}", "file:///a#b", None),
        ("file:///{path}", "file://readme.md", None),
        ("file:///{path}", "http:///readme.md", None),
        ("file:///{+path}", "file:///src/main.rs", {"path": "src/main.rs"}),
        ("file:///{+path}", "file:///a%20b/c%2Fd", {"path": "a b/c/d"}),
        ("file:///{+path}", "file:///a/b?x=1#y", {"path": "a/b?x=1#y"}),
        ("file:///{+path}", "file:///", {"path": ""}),
        ("file:///{+path}", "file:///a b", None),  # space is never in a URI
        ("file:///{+path}", "file:///a<b>", None),
        ("users://{id}/profile", "users://42/profile", {"id": "42"}),
        (
            "users://{id}/profile",
            "users://alice%40example.com/profile",
            {"id": "alice@example.com"},
        ),
        ("users://{id}/profile", "users:///profile", {"id": ""}),
        ("users://{id}/profile", "users://42/settings", None),
        ("users://{id}/profile", "users://4/2/profile", None),
        ("users://{id}/profile", "users://42/profile/", None),
        ("users://{id}/profile", "users://42/profilex", None),
        ("users://{id}/profile", "USERS://42/profile", None),  # literals are exact
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues",
            {"owner": "o", "repo": "r"},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?state=open",
            {"owner": "o", "repo": "r", "state": "open"},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?labels=bug,ui&state=closed",
            {"owner": "o", "repo": "r", "state": "closed", "labels": "bug,ui"},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?state=",
            {"owner": "o", "repo": "r", "state": ""},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?state",
            {"owner": "o", "repo": "r", "state": ""},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?",
            {"owner": "o", "repo": "r"},
        ),
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?q=a%20b%26c",
            None,
        ),  # unknown parameter
        (
            "repo://{owner}/{repo}/issues{?state,labels}",
            "repo://o/r/issues?state=a&state=b",
            None,
        ),  # non-exploded parameter given twice
        ("repo://{owner}/{repo}/issues{?state,labels}", "repo://o/r/issues/x", None),
        ("repo://{owner}/{repo}/issues{?state,labels}", "repo://o/r/issues?state=a#frag", None),
        (
            "weather://{city}/{date}",
            "weather://New%20York/2025-01-12",
            {"city": "New York", "date": "2025-01-12"},
        ),
        (
            "weather://{city}/{date}",
            "weather://Z%C3%BCrich/today",
            {"city": "Zürich", "date": "today"},
        ),
        ("weather://{city}/{date}", "weather://Zürich/today", {"city": "Zürich", "date": "today"}),
        ("weather://{city}/{date}", "weather://Paris", None),
        ("weather://{city}/{date}", "weather://Paris/2025/01", None),
    ],
)
def test_match_mcp_examples(template: str, uri: str, expected: UriTemplateMatch | None) -> None:
    assert UriTemplate(template).match(uri) == expected


# ----------------------------------------------------------- matching: operator semantics


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        # Literal-only templates.
        ("plain://x", "plain://x", {}),
        ("plain://x", "plain://y", None),
        ("", "", {}),
        ("", "x", None),
        # Simple and multi-variable.
        ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
        ("{x,y}", "1024", {"x": "1024"}),
        ("{x,y}", "1,2,3", {"x": "1", "y": "2,3"}),  # last variable takes the rest
        ("{list}", "red,green,blue", {"list": "red,green,blue"}),
        ("{list*}", "red,green,blue", {"list": ["red", "green", "blue"]}),
        ("{list*}", "red", {"list": ["red"]}),
        ("{list*}", "", {}),
        ("{a*,b}", "1,2,3", {"a": ["1", "2"], "b": "3"}),
        ("{a,b*}", "1,2,3", {"a": "1", "b": ["2", "3"]}),
        (
            "{+x,hello,y}",
            "1024,Hello%20World!,768",
            {"x": "1024", "hello": "Hello World!", "y": "768"},
        ),
        # Fragment.
        ("foo{#frag}", "foo#a/b?c", {"frag": "a/b?c"}),
        ("foo{#frag}", "foo#", {"frag": ""}),
        ("foo{#frag}", "foo", {}),
        ("{+path}{#frag}", "/a#b#c", {"path": "/a#b", "frag": "c"}),
        # Label.
        ("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
        ("X{.list*}", "X.red.green.blue", {"list": ["red", "green", "blue"]}),
        ("X{.var}", "X", {}),
        ("X{.var}", "X.", {"var": ""}),
        ("X{.var}", "X.a.b", {"var": "a.b"}),
        ("X{.var}", "Xa", None),
        # Path segments.
        ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
        ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
        ("{/list*}", "/red%2Fgreen/blue", {"list": ["red/green", "blue"]}),
        ("{/list*}", "/", {"list": [""]}),
        ("{/list*}", "", {}),
        (
            "{/list*,path:4}",
            "/red/green/blue/%2Ffoo",
            {"list": ["red", "green", "blue"], "path": "/foo"},
        ),
        ("{/var}", "/a/b", None),  # one non-exploded segment cannot contain '/'
        ("{/x,y}", "/a/b/c", None),
        ("files{/path*}/raw", "files/a/b/raw", {"path": ["a", "b"]}),
        ("files{/path*}/raw", "files/raw", {}),
        # Path-style parameters: by name, any order, optional.
        ("{;x,y}", ";x=1024;y=768", {"x": "1024", "y": "768"}),
        ("{;x,y}", ";y=768;x=1024", {"x": "1024", "y": "768"}),
        ("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
        ("{;list*}", ";list=red;list=green;list=blue", {"list": ["red", "green", "blue"]}),
        ("{;x}", ";z=1", None),
        # Query and continuation.
        ("{?x,y}", "?y=768&x=1024", {"x": "1024", "y": "768"}),
        ("{?list*}", "?list=red&list=green&list=blue", {"list": ["red", "green", "blue"]}),
        ("{?list*}", "?list=red", {"list": ["red"]}),
        ("{?x}", "?x=1&x=2", None),
        ("{?x}", "?x=a=b", {"x": "a=b"}),  # the first '=' splits; later ones are data
        ("{?x}", "?x=a%3Db%26c", {"x": "a=b&c"}),
        ("{?a}{&b}", "?b=1&a=2", {"a": "2", "b": "1"}),
        ("{?x}{&list*}", "?list=1&x=2&list=3", {"x": "2", "list": ["1", "3"]}),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
        ("?fixed=yes{&x}", "?fixed=yes", {}),
        ("?fixed=yes{&x}", "?fixed=no&x=1", None),
        ("/search{?q}{#section}", "/search?q=a%20b#top", {"q": "a b", "section": "top"}),
        (
            "{/id*}{?fields,first_name,last.name,token}",
            "/person?fields=id,name,picture&first_name=John&last.name=Doe&token=12345",
            {
                "id": ["person"],
                "fields": "id,name,picture",
                "first_name": "John",
                "last.name": "Doe",
                "token": "12345",
            },
        ),
        (
            "/lookup{?Stra%C3%9Fe}",
            "/lookup?Stra%C3%9Fe=Gr%C3%BCner%20Weg",
            {"Stra%C3%9Fe": "Grüner Weg"},
        ),
        # Associative arrays cannot be recovered (documented limitation).
        ("{?keys*}", "?semi=%3B&dot=.", None),
    ],
)
def test_match_operators(template: str, uri: str, expected: UriTemplateMatch | None) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        # Earlier expressions are greedy, later ones as short as possible.
        ("{+a}/{+b}", "x/y/z", {"a": "x/y", "b": "z"}),
        ("{+a}/{+b}/{+c}", "1/2/3/4", {"a": "1/2", "b": "3", "c": "4"}),
        ("{a}{b}", "xy", {"a": "xy", "b": ""}),
        ("{name}.txt", "a.b.txt", {"name": "a.b"}),
        ("{+path}/edit", "a/edit/edit", {"path": "a/edit"}),
        # ...but an optional prefixed expression is present when it can be.
        ("file:///{name}{.ext}", "file:///a.tar.gz", {"name": "a.tar", "ext": "gz"}),
        ("file:///{name}{.ext}", "file:///README", {"name": "README"}),
        ("{+a}{/b}", "x/y/z", {"a": "x/y", "b": "z"}),
        ("{/a*}{/b}", "/p/q/r", {"a": ["p", "q"], "b": "r"}),
        ("{/a}{/b}", "/p/q", {"a": "p", "b": "q"}),
        ("{/a}{/b}", "/p", {"b": "p"}),  # resolved from the right: the last one is present
        ("{/path*}{?q}", "/a/b?q=1", {"path": ["a", "b"], "q": "1"}),
        ("{/path*}{?q}", "/a/b", {"path": ["a", "b"]}),
    ],
)
def test_match_ambiguity_policy(template: str, uri: str, expected: UriTemplateMatch | None) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("x:{v}", "x:%41%42", {"v": "AB"}),
        ("x:{v}", "x:caf%C3%A9", {"v": "café"}),
        ("x:{v}", "x:caf%c3%a9", {"v": "café"}),  # lower-case hex
        ("x:{v}", "x:café", {"v": "café"}),  # IRIs: non-ASCII accepted as is
        ("x:{v}", "x:%2525", {"v": "%25"}),  # decoded exactly once
        ("x:{v}", "x:%zz", None),
        ("x:{v}", "x:%4", None),
        ("x:{v}", "x:%", None),
        ("x:{v}", "x:%FF", None),  # not UTF-8
        ("x:{v}", "x:%C3", None),  # truncated UTF-8
        ("x:{+v}", "x:a%2Fb/c", {"v": "a/b/c"}),
        ("x:{+v}", "x:100%", None),
        ("x:{+v}", "x:%G1", None),
        ("x:{/v*}", "x:/a/%zz", None),
        ("x:{?v}", "x:?v=%", None),
        ("x:{?v}", "x:?v=%E2%82%AC", {"v": "€"}),
    ],
)
def test_match_percent_decoding(template: str, uri: str, expected: UriTemplateMatch | None) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("{var:3}", "val", {"var": "val"}),
        ("{var:3}", "valu", None),
        ("{var:3}", "%C3%A9t%C3%A9", {"var": "été"}),  # counts characters, not bytes
        ("{x}/{x}", "a/a", {"x": "a"}),
        ("{x}/{x}", "a/b", None),
        ("{/var:1,var}", "/v/value", {"var": "value"}),
        ("{/var:1,var}", "/w/value", None),
        ("{var:2}/{var:4}", "ab/abcd", {"var": "abcd"}),
        ("{var:2}/{var:4}", "ab/xbcd", None),
        ("{x}/{x*}", "a/a", None),  # str vs list: inconsistent
    ],
)
def test_match_prefix_and_repeated_variables(
    template: str, uri: str, expected: UriTemplateMatch | None
) -> None:
    assert UriTemplate(template).match(uri) == expected


def test_match_uri_length_limit() -> None:
    t = UriTemplate("file:///{+path}")
    at_limit = "file:///" + "a" * (DEFAULT_MAX_URI_LENGTH - 8)
    assert t.match(at_limit) == {"path": "a" * (DEFAULT_MAX_URI_LENGTH - 8)}
    assert t.match(at_limit + "a") is None  # too long: documented as "no match"
    small = UriTemplate("file:///{+path}", max_uri_length=16)
    assert small.max_uri_length == 16
    assert small.match("file:///12345678") == {"path": "12345678"}
    assert small.match("file:///123456789") is None


# ------------------------------------------------------------------------- round trips


ROUND_TRIPS: list[tuple[str, dict[str, str | list[str]]]] = [
    ("file:///{path}", {"path": "notes & ideas?.md"}),
    ("file:///{+path}", {"path": "src/pkg/mod.py"}),
    ("users://{id}/profile", {"id": "user/42"}),
    (
        "repo://{owner}/{repo}/issues{?state,labels}",
        {"owner": "o", "repo": "r", "state": "a&b=c", "labels": "x,y"},
    ),
    ("repo://{owner}/{repo}/issues{?state,labels}", {"owner": "o", "repo": "r"}),
    ("weather://{city}/{date}", {"city": "São Paulo", "date": "2025-11-25"}),
    ("db://{table}/rows/{id}{?fields*}", {"table": "t", "id": "7", "fields": ["a", "b"]}),
    ("git://{repo}/blob/{ref}{/path*}", {"repo": "r", "ref": "main", "path": ["a", "b c", "d"]}),
    ("x{.var}", {"var": "value"}),
    ("{/var,x}/here", {"var": "value", "x": "1024"}),
    ("{;x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
    ("{&list*}", {"list": ["red", "green", "blue"]}),
    ("{;list*}", {"list": ["red", "", "blue"]}),
    ("{x,hello,y}", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("{#path,x}/here", {"path": "/foo/bar", "x": "1024"}),
    ("{/list*,path:4}", {"list": ["red", "green", "blue"], "path": "/foo"}),
    ("mem://{ns}/{key}{#frag}", {"ns": "a", "key": "b", "frag": "sec/1"}),
    ("search://{engine}{?q,lang}{&page}", {"engine": "ddg", "q": "uri templates", "page": "2"}),
    (
        "{scheme}://{host}{/segments*}{?query*}{#fragment}",
        {
            "scheme": "https",
            "host": "example.com",
            "segments": ["a", "b"],
            "query": ["1", "2"],
            "fragment": "f",
        },
    ),
]


@pytest.mark.parametrize(("template", "values"), ROUND_TRIPS)
def test_round_trip(template: str, values: dict[str, str | list[str]]) -> None:
    t = UriTemplate(template)
    uri = t.expand(values)
    assert t.match(uri) == values
    assert t.expand(values) == uri


# ----------------------------------------------------------------------- linear time

ADVERSARIAL = [
    # Templates that would backtrack catastrophically as naive regexes
    # ([^/]*)([^/]*)([^/]*)x or (.*)/(.*)/(.*)/z, against near-miss inputs.
    ("{a}{b}{c}x", lambda n: "a" * (n - 1) + "x"),
    ("{a}{b}{c}x", lambda n: "a" * (n - 2) + "/x"),
    ("{+a}/{+b}/{+c}/z", lambda n: "a" * (n - 2) + "/z"),
    ("{+a}/{+b}/{+c}/z", lambda n: "/" * (n - 1) + "z"),
    ("{a}a{b}a{c}ax", lambda n: "a" * (n - 1) + "x"),
    ("{/a*}{/b}{?q,r}{&s*}", lambda n: "/x" * (n // 2 - 1) + "?q"),
    ("{+a}{+b}{+c}{+d}{+e}{+f}{+g}{+h}!", lambda n: "!" * (n - 1) + "!"),
    ("{+a}{+b}{+c}{+d}{+e}{+f}{+g}{+h}!", lambda n: "!" * (n - 2) + " !"),
    ("x" + "".join(f"{{v{i}}}a" for i in range(20)) + "y", lambda n: "x" + "a" * (n - 2) + "y"),
    ("x" + "".join(f"{{v{i}}}a" for i in range(20)) + "y", lambda n: "x" + "a" * (n - 4) + "/ay"),
]


@pytest.mark.parametrize(("template", "make_uri"), ADVERSARIAL)
def test_match_is_linear_time(template: str, make_uri: Callable[[int], str]) -> None:
    t = UriTemplate(template)
    n = DEFAULT_MAX_URI_LENGTH
    uri = make_uri(n)
    assert len(uri) <= n
    start = time.perf_counter()
    t.match(uri)
    elapsed = time.perf_counter() - start
    # Milliseconds when linear; a super-linear match takes far longer than this margin,
    # which holds on a loaded machine.
    assert elapsed < 5.0, f"{template!r} took {elapsed:.3f}s on {len(uri)} characters"

    # Algorithmic check, independent of machine speed: the work counter grows linearly.
    chain = max(run.count("{") for run in re.findall(r"(?:\{[^}]*\})+", template))
    _, small_steps = t._match_counted(make_uri(n // 4))
    _, steps = t._match_counted(uri)
    per_char_bound = chain + 3  # one transition + one closure round per adjacent expression
    assert steps <= per_char_bound * (len(uri) + 1)
    assert steps <= 4.2 * small_steps + 100


def test_work_counter_is_zero_for_over_long_uris() -> None:
    t = UriTemplate("{a}{b}{c}x")
    assert t._match_counted("a" * (DEFAULT_MAX_URI_LENGTH + 1)) == (None, 0)


# ---------------------------------------------------------------------------- hypothesis


@functools.cache
def _compiled(template: str) -> UriTemplate:
    return UriTemplate(template)


_ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=20)
_SEGMENT_LISTS = st.lists(_ANY_TEXT, min_size=1, max_size=5)
_SAFE_PATH = st.text(st.sampled_from("abcXYZ019-._~/!$&'()*+,;=:@"), max_size=30)


@settings(max_examples=100)
@given(a=_ANY_TEXT, b=_ANY_TEXT, c=_ANY_TEXT)
def test_property_simple_round_trip(a: str, b: str, c: str) -> None:
    for template, values in (
        ("res://{a}", {"a": a}),
        ("res://{a}/{b}/x/{c}", {"a": a, "b": b, "c": c}),
        ("res://{a}.txt", {"a": a}),
        ("res://{a}{?b,c}", {"a": a, "b": b, "c": c}),
        # reserved expansion passes %XX through unchanged, so no '%' in {#c}
        ("res://{a}/{b}{#c}", {"a": a, "b": b, "c": c.replace("%", "")}),
    ):
        t = _compiled(template)
        assert t.match(t.expand(values)) == values


@settings(max_examples=100)
@given(head=_ANY_TEXT, segments=_SEGMENT_LISTS, path=_SAFE_PATH, x=_ANY_TEXT, y=_ANY_TEXT)
def test_property_path_style_round_trip(
    head: str, segments: list[str], path: str, x: str, y: str
) -> None:
    cases: list[tuple[str, dict[str, str | list[str]]]] = [
        ("file:///{+path}", {"path": path}),
        ("file:///{+path}/edit", {"path": path}),
        ("git://{head}{/segments*}", {"head": head, "segments": segments}),
        ("git://{head}{/segments*}{?x}", {"head": head, "segments": segments, "x": x}),
        ("p{/x,y}", {"x": x, "y": y}),
        ("p{;x,y}", {"x": x, "y": y}),
        ("p{.x}", {"x": x}),
    ]
    for template, values in cases:
        t = _compiled(template)
        assert t.match(t.expand(values)) == values, template


# Differential test of the automaton against Python's regex engine on tiny inputs (where
# backtracking is harmless): the matcher accepts exactly the URIs the equivalent regex
# accepts, and the values it picks expand back to the same URI.
_DIFF_ALPHABET = "ab./-"
_DIFF_CLASS = {
    "": "[ab.-]*",
    "+": "[ab./#-]*",
    "#": "(?:#[ab./#-]*)?",
    ".": r"(?:\.[ab.-]*)?",
    "/": "(?:/[ab./-]*)?",
}
_DIFF_PIECES = st.one_of(
    st.text(st.sampled_from(_DIFF_ALPHABET), min_size=1, max_size=3).map(lambda s: ("lit", s)),
    st.tuples(st.sampled_from(["", "+", "#", ".", "/"]), st.booleans()).map(
        lambda p: ("expr", p[0] + ("*" if p[1] or p[0] == "/" else ""))
    ),
)


@settings(max_examples=150)
@given(
    pieces=st.lists(_DIFF_PIECES, min_size=1, max_size=6),
    uri=st.text(st.sampled_from(_DIFF_ALPHABET + "#"), max_size=12),
)
def test_property_matches_regex_semantics(pieces: list[tuple[str, str]], uri: str) -> None:
    template_parts: list[str] = []
    regex_parts: list[str] = []
    for index, (kind, text) in enumerate(pieces):
        if kind == "lit":
            template_parts.append(text)
            regex_parts.append(re.escape(text))
        else:
            op = text.rstrip("*")
            explode = "*" if text.endswith("*") else ""
            template_parts.append(f"{{{op}v{index}{explode}}}")
            regex_parts.append(_DIFF_CLASS[op])
    t = UriTemplate("".join(template_parts))
    result = t.match(uri)
    assert (result is not None) == (re.fullmatch("".join(regex_parts), uri) is not None)
    if result is not None:
        assert t.expand(result) == uri
