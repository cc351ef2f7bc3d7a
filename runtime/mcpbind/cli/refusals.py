"""Why a server refused our credentials, in one line with advice (HTTP 401/403).

The server's ``WWW-Authenticate`` challenge (RFC 6750 §3) says why: ``invalid_token`` with an
``error_description`` (expired, for another resource, bad signature…), or
``insufficient_scope`` with the ``scope`` the operation needs. The advice follows the reason:
a new token or ``--auth`` for a refused token, the scopes to ask for when some are missing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["refusal_message"]

_SIGN_IN = "run again with --auth (or --header 'Authorization: Bearer <token>')"


def refusal_message(status: int, data: dict[str, Any], message: str) -> str:
    """The one-line message for an HTTP 401/403 answer; ``data`` is the error's data (its
    ``wwwAuthenticate`` the raw challenge header), ``message`` the error's message."""
    from ..auth.client.discovery import parse_challenges
    from ..auth.client.errors import redact

    header = data.get("wwwAuthenticate")
    challenges = parse_challenges(header if isinstance(header, str) else None)
    params = next((c.params for c in challenges if c.params.get("error")), {})
    if not params and challenges:
        params = challenges[0].params
    error = params.get("error")
    reason = redact(params.get("error_description") or "", 200).strip()
    scope = params.get("scope", "").strip()
    said = f": {reason}" if reason else ""
    if error == "insufficient_scope" or (status == 403 and scope and error is None):
        scopes = scope.split()
        ask = " ".join(f"--scope {s}" for s in scopes)
        needs = f"; it needs the scopes: {scope}" if scope and scope not in reason else ""
        advice = (
            f"get a token with those scopes, or run again with --auth {ask}"
            if scopes
            else "get a token with more scopes, or run again with --auth and --scope"
        )
        return f"the server refused the token (HTTP {status}, insufficient scope){said}{needs}; {advice}"
    if error == "invalid_token":
        lowered = reason.lower()
        if "expired" in lowered:
            advice = "get a new token, or run again with --auth"
        elif "resource" in lowered or "audience" in lowered:
            advice = (
                "the token was issued for another server: get one for this server's URL "
                "(its resource), or run again with --auth"
            )
        else:
            advice = "get a new token, or run again with --auth"
        return f"the server refused the token (HTTP {status}){said}; {advice}"
    if error is not None:  # invalid_request, a DPoP error, …
        return f"the server refused the request (HTTP {status}, {error}){said}; {_SIGN_IN}"
    detail = redact(message, 200).strip()
    shown = f" ({detail})" if detail and status == 403 else ""
    return f"the server requires authorization (HTTP {status}){shown}: {_SIGN_IN}"
