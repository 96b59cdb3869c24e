"""Whether a request is the admin's: it carries ``[server] admin_token``, as a bearer token or
as the password of HTTP Basic, which a browser sends with every page of the site once its
user has signed in at /admin.

The public pages tell a visitor what there is ("No members are listed yet"); the commands
and settings that would fill an empty part are the admin's business, shown to the admin
only (``admin_view``), and such a page is never kept by a shared cache.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re

from starlette.requests import Request

# "(`papersift enrich` adds them)" and the like in the engine's notes: the command is for
# the admin; the note stands without it.
_COMMAND_ASIDE = re.compile(r" \(`papersift [^)]*\)")


def presented(request: Request, basic: bool) -> str | None:
    """The token the request presents (a bearer token; ``basic``: or a Basic password)."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return value.strip()
    if basic and scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


def matches(token: str, given: str | None) -> bool:
    """Constant-time comparison of the presented token with the configured one."""
    return bool(token) and given is not None and hmac.compare_digest(given.encode(), token.encode())


def admin_view(request: Request) -> bool:
    """Whether this request is the admin's (the template global): never with no token set."""
    token: str = request.app.state.config.server.admin_token
    return bool(token) and matches(token, presented(request, basic=True))


def for_visitor(note: str) -> str:
    """An engine note without the command it suggests (the templates' ``visitor`` filter)."""
    return _COMMAND_ASIDE.sub("", note)
