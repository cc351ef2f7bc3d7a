"""Authorization options for commands that reach a server URL (ls, call, read, prompt, bind).

* ``--auth``: OAuth in the browser (authorization code + PKCE, a loopback redirect on
  127.0.0.1), tokens kept in the user's token file (``mcpbind.auth.client.FileTokenStore``);
  ``--auth-headless`` follows the authorization server's redirects without a browser (an
  authorization server that consents by itself, tests).
* ``--client-id`` / ``--client-secret`` (or ``$MCPBIND_CLIENT_SECRET``) / ``--client-key``:
  a pre-registered client for ``--auth``, or with ``--client-credentials`` the
  client-credentials grant (no user, no browser).
* ``--scope``: scopes to ask for (else the server's challenge, else its metadata).
(``--header "Name: value"``, a static header such as a bearer token, is a server option:
:mod:`.target`.)

A server that answers 401 without any of these is reported in one line naming ``--auth``,
with exit code 6 (``EXIT_AUTH``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

__all__ = ["AuthSettings", "auth_options"]

T = TypeVar("T")


@dataclass(frozen=True)
class AuthSettings:
    """What the options asked for; :meth:`build` makes the ``auth=`` object."""

    interactive: bool = False
    headless: bool = False
    client_credentials: bool = False
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_key: str | None = None
    scopes: tuple[str, ...] = ()

    @property
    def wanted(self) -> bool:
        return self.interactive or self.client_credentials

    def build(self) -> Any:
        """The ``httpx2.Auth`` for the HTTP transport, or ``None``."""
        if not self.wanted:
            return None
        from pathlib import Path  # here: every command's options are built at start-up

        from ..auth.client import (
            ClientCredentials,
            FileTokenStore,
            HeadlessRedirect,
            LoopbackRedirect,
            OAuth,
        )

        key = Path(self.client_key).read_text() if self.client_key else None
        scopes = list(self.scopes) or None
        store = FileTokenStore()
        if self.client_credentials:
            if not self.client_id:
                raise click.UsageError("--client-credentials needs --client-id")
            if not (self.client_secret or key):
                raise click.UsageError(
                    "--client-credentials needs --client-secret ($MCPBIND_CLIENT_SECRET) "
                    "or --client-key"
                )
            return ClientCredentials(
                self.client_id,
                client_secret=self.client_secret,
                private_key=key,
                scopes=scopes,
                token_store=store,
            )
        handler = HeadlessRedirect() if self.headless else LoopbackRedirect()
        return OAuth(
            redirect_handler=handler,
            client_name="mcpbind CLI",
            client_id=self.client_id,
            client_secret=self.client_secret,
            private_key=key,
            scopes=scopes,
            token_store=store,
        )


def auth_options(command: Callable[..., T]) -> Callable[..., T]:
    """Add the options; the command receives them as ``auth_settings``."""

    @click.option(
        "--auth", "interactive", is_flag=True, help="Authorize with OAuth in the browser."
    )
    @click.option(
        "--auth-headless",
        "headless",
        is_flag=True,
        help="With --auth: follow the authorization server's redirects, no browser.",
    )
    @click.option(
        "--client-credentials",
        is_flag=True,
        help="Use the OAuth client-credentials grant (with --client-id and a secret or key).",
    )
    @click.option("--client-id", default=None, help="A pre-registered OAuth client id.")
    @click.option(
        "--client-secret",
        envvar="MCPBIND_CLIENT_SECRET",
        default=None,
        help="The client secret (default: $MCPBIND_CLIENT_SECRET).",
    )
    @click.option(
        "--client-key",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="PEM private key for private_key_jwt client authentication.",
    )
    @click.option("--scope", "scopes", multiple=True, help="OAuth scope to ask for (repeatable).")
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        kwargs["auth_settings"] = AuthSettings(
            interactive=kwargs.pop("interactive") or kwargs["headless"],
            headless=kwargs.pop("headless"),
            client_credentials=kwargs.pop("client_credentials"),
            client_id=kwargs.pop("client_id"),
            client_secret=kwargs.pop("client_secret"),
            client_key=kwargs.pop("client_key"),
            scopes=tuple(kwargs.pop("scopes")),
        )
        return command(*args, **kwargs)

    return wrapper
