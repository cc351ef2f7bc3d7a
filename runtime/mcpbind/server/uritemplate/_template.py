"""RFC 6570 URI templates for MCP resource templates: parse once, expand, and match.

MCP servers advertise *resource templates* (``resources/templates/list``, spec 2025-11-25
``server/resources.mdx`` §Resource Templates) such as ``file:///{path}``. Clients then
send *concrete* URIs in ``resources/read``; the server has to find the template that
produced the URI and recover the template arguments. :class:`UriTemplate` does both
directions:

* **Expansion** (:meth:`UriTemplate.expand`) implements RFC 6570 levels 1-4 exactly as
  the RFC's Appendix A algorithm: operators ``+ # . / ; ? &``, prefix ``{x:3}`` and
  explode ``{x*}`` modifiers, string, list and associative-array values. A value of
  ``None``, an empty list or an empty mapping is *undefined* and is skipped.

* **Matching** (:meth:`UriTemplate.match`) is the inverse, which RFC 6570 leaves
  unspecified (expansion is not injective in general). The semantics here:

  - The whole URI must match the whole template (anchored at both ends). Literal text
    is compared exactly, in its expanded (percent-encoded) form, case-sensitively.
  - Each expression matches a run of the characters its expansion can produce:
    simple ``{x}`` matches unreserved characters, ``%XX`` triplets and ``,`` -- never
    ``/ ? # &`` and so never crosses a path segment; ``{+x}`` and ``{#x}`` also match
    the RFC 3986 reserved characters, including ``/ ? #``; ``{.x}``, ``{/x}``, ``{;x}``,
    ``{?x}`` and ``{&x}`` start with their operator character, and may be absent as a
    whole (then their variables are missing from the result). Non-ASCII characters
    (IRIs) are accepted inside values as they are.
  - When the split between expressions is ambiguous (``{+a}/{+b}`` against ``x/y/z``),
    expressions are resolved from the last to the first and each takes the *shortest*
    run that still lets everything before it match, so earlier expressions are greedy
    (``a="x/y"``, ``b="z"``). One exception: an optional prefixed expression is taken
    as *present* whenever the URI allows it, so ``{name}{.ext}`` splits ``a.tar.gz``
    as ``name="a.tar"``, ``ext="gz"`` (and ``{/a}{/b}`` against ``/p`` gives only
    ``b="p"``). The split is chosen from character classes alone and then decoded; if
    decoding fails the URI does not match (no other split is tried).
  - Values are percent-decoded (UTF-8). A malformed triplet (``%zz``, ``%4``) or
    invalid UTF-8 makes the URI not match, for every operator.
  - Within one expression, ``{x,y}`` items are assigned left to right; the last
    variable takes any remaining items (for ``{/x}`` a raw ``/`` is never part of one
    value, so extra segments make the URI not match). An exploded variable ``{x*}``
    always matches as a ``list[str]`` (``{/path*}`` gives the path segments) and takes
    as many items as it can while leaving one for each later variable. Non-exploded
    variables always match as ``str``: ``{list}`` against ``red,green`` gives
    ``"red,green"``.
  - Named operators (``{;x,y}``, ``{?x,y}``, ``{&x}``) are matched by name, in any
    order, and each parameter may be absent. Adjacent named expressions share one pool
    (``{?a}{&b}`` accepts ``?b=1&a=2``). ``name`` without ``=`` is the empty string;
    the first ``=`` separates name and value (``?x=a=b`` gives ``x="a=b"``).
    Parameters that are not template variables, or a non-exploded name given twice,
    make the URI not match; an exploded name may repeat and collects into a list.
    Associative-array values cannot be recovered: ``{?keys*}`` only matches parameters
    literally named ``keys``.
  - ``{x}`` (no operator) against an empty run gives ``x=""``; the server decides
    whether an empty argument is acceptable.
  - A prefix ``{x:3}`` limits the decoded value to 3 characters. A variable used more
    than once must match consistently (``{var:1}/{var}`` requires the first to be a
    prefix of the second).

* **Complexity and limits.** Matching is linear in ``len(uri)`` for any template: a
  bit-parallel (Shift-And style) simulation of the template's automaton (one bit per
  literal character or expression part) does a fixed number of big-integer operations
  per URI character -- one transition plus one epsilon-closure round per expression in
  the longest run of adjacent expressions -- then one backward pass over the recorded
  states picks the split. Nothing ever backtracks, so the worst case is
  O(len(uri) * len(template)) bit operations, with the template bounded by
  ``max_length``. URIs longer than ``max_uri_length`` (default 8 KiB) simply do not match;
  templates longer than ``max_length`` or with more than ``max_variables`` variables
  are rejected with :class:`UriTemplateError`, as is any template that is not valid
  RFC 6570 syntax.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._matching import Matcher
from ._syntax import (
    DEFAULT_MAX_TEMPLATE_LENGTH,
    DEFAULT_MAX_URI_LENGTH,
    DEFAULT_MAX_VARIABLES,
    Expression,
    UriTemplateError,
    UriTemplateMatch,
    UriTemplateValue,
    expand_expression,
    parse_template,
)

__all__ = ["UriTemplate"]


class UriTemplate:
    """A parsed RFC 6570 URI template (levels 1-4) that can expand and match URIs.

    Construction validates the template and precompiles the matcher. Treat instances as
    immutable: they are hashable (by template text), and :meth:`match` and
    :meth:`expand` keep no state, so one instance can serve every request and thread.
    """

    __slots__ = ("_matcher", "_parts", "max_uri_length", "template", "variables")

    template: str
    variables: tuple[str, ...]
    max_uri_length: int

    def __init__(
        self,
        template: str,
        *,
        max_length: int = DEFAULT_MAX_TEMPLATE_LENGTH,
        max_variables: int = DEFAULT_MAX_VARIABLES,
        max_uri_length: int = DEFAULT_MAX_URI_LENGTH,
    ) -> None:
        """Parse and validate ``template``; raises :class:`UriTemplateError` if invalid.

        ``max_length`` bounds the template text, ``max_variables`` the number of
        variable specifiers, and ``max_uri_length`` the URIs :meth:`match` accepts.
        """
        if not isinstance(template, str):
            raise TypeError(f"URI template must be a str, not {type(template).__name__}")
        if len(template) > max_length:
            raise UriTemplateError(
                f"URI template is {len(template)} characters long; the limit is {max_length}"
            )
        self.template = template
        self.max_uri_length = max_uri_length
        self._parts = parse_template(template, max_variables)
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, Expression):
                for spec in part.varspecs:
                    names.setdefault(spec.name)
        self.variables = tuple(names)
        self._matcher = Matcher(self._parts, self.variables, max_uri_length)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UriTemplate):
            return self.template == other.template
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.template)

    # ------------------------------------------------------------------ expansion

    def expand(
        self, values: Mapping[str, UriTemplateValue] | None = None, /, **kwargs: UriTemplateValue
    ) -> str:
        """Expand the template (RFC 6570 §3) with ``values`` and/or keyword arguments.

        Missing variables, ``None``, empty lists and empty mappings are undefined and
        expand to nothing. Raises :class:`UriTemplateError` for a prefix modifier on a
        list or mapping value, and ``TypeError`` for values of other types.
        """
        merged: Mapping[str, UriTemplateValue]
        if kwargs:
            merged = {**values, **kwargs} if values else kwargs
        else:
            merged = values if values is not None else {}
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(expand_expression(part, merged))
        return "".join(out)

    # ------------------------------------------------------------------- matching

    def match(self, uri: str) -> UriTemplateMatch | None:
        """Match a concrete URI; return the variables, or ``None`` if it doesn't match.

        See the module docstring for the exact semantics. Runs in time linear in
        ``len(uri)``; URIs longer than ``max_uri_length`` never match.
        """
        return self._matcher.match_counted(uri)[0]

    def _match_counted(self, uri: str) -> tuple[UriTemplateMatch | None, int]:
        """:meth:`match` plus a count of work units (a debug hook for complexity tests)."""
        return self._matcher.match_counted(uri)
