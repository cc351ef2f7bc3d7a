"""The settings the two HTTP transports of one server share, declared once.

``StreamableHTTPApp`` and ``LegacySSEApp`` take the same limits and security keywords (the
``Host``/``Origin`` allowlists, body and session caps, deadlines, the principal, the auth
hook, the trusted proxies). Each app holds them in one :class:`EndpointSettings`, read and
set through the app's attributes of the same names (:class:`SharedSettings`); a legacy
endpoint made with ``LegacySSEApp.beside(app)`` holds the *same* object, so a setting changed
on either (an ``auth`` hook installed later, a cap) applies to both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from ...protocol import SessionOptions
from ._asgi import Scope
from .auth_hook import AuthHook, scope_principal
from .proxies import TrustedProxies
from .security import HostPolicy

__all__ = ["EndpointSettings", "SharedSettings"]

_T = TypeVar("_T")
_DEFAULT_DEPTH = SessionOptions().max_depth


def _any_host() -> HostPolicy:
    return HostPolicy(None, None)


@dataclass(slots=True, kw_only=True)
class EndpointSettings:
    """Limits and security of an HTTP endpoint (see ``StreamableHTTPApp`` for each one)."""

    policy: HostPolicy = field(default_factory=_any_host)
    max_body_size: int = 4 * 1024 * 1024
    max_sessions: int = 1000
    body_timeout: float | None = 30.0
    sse_keepalive: float | None = 15.0
    principal: Callable[[Scope], object] = scope_principal
    session_options: SessionOptions | None = None
    max_sessions_per_client: int | None = 100
    init_timeout: float | None = 10.0
    auth: AuthHook | None = None
    proxies: TrustedProxies | None = None

    def __post_init__(self) -> None:
        if self.max_body_size < 1 or self.max_sessions < 1:
            raise ValueError("max_body_size and max_sessions must be positive")

    @classmethod
    def of(
        cls,
        *,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        trusted_proxies: Iterable[str] | None = None,
        **settings: Any,
    ) -> EndpointSettings:
        """From the apps' keywords: the allowlists and proxy addresses as given to them."""
        proxies = None if trusted_proxies is None else TrustedProxies(trusted_proxies)
        policy = HostPolicy(allowed_hosts, allowed_origins)
        return cls(policy=policy, proxies=proxies, **settings)

    @property
    def max_depth(self) -> int:
        """How deeply a body may nest (``session_options.max_depth``)."""
        options = self.session_options
        return _DEFAULT_DEPTH if options is None else options.max_depth

    def admit(self, scope: Scope) -> None:
        """Name the request's client by the address a trusted proxy forwarded, if any."""
        if self.proxies is not None:
            self.proxies.rewrite(scope)


class _Setting(Generic[_T]):
    """An app attribute that reads and writes the same-named field of its ``settings``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> _Setting[_T]: ...

    @overload
    def __get__(self, instance: SharedSettings, owner: type) -> _T: ...

    def __get__(self, instance: SharedSettings | None, owner: type) -> _Setting[_T] | _T:
        if instance is None:
            return self
        value: _T = getattr(instance.settings, self.name)
        return value

    def __set__(self, instance: SharedSettings, value: _T) -> None:
        setattr(instance.settings, self.name, value)


class SharedSettings:
    """The apps' view of their :class:`EndpointSettings`: ``app.max_sessions`` and the rest."""

    settings: EndpointSettings

    policy = _Setting[HostPolicy]()
    max_body_size = _Setting[int]()
    max_sessions = _Setting[int]()
    body_timeout = _Setting[float | None]()
    sse_keepalive = _Setting[float | None]()
    principal = _Setting[Callable[[Scope], object]]()
    session_options = _Setting[SessionOptions | None]()
    max_sessions_per_client = _Setting[int | None]()
    init_timeout = _Setting[float | None]()
    auth = _Setting[AuthHook | None]()
    proxies = _Setting[TrustedProxies | None]()
