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
import math
import re
from typing import TYPE_CHECKING

from starlette.requests import Request

from papersift.server.urls import client_address

if TYPE_CHECKING:  # the limiter lives on app.state (server.app); ratelimit imports errors
    from papersift.server.ratelimit import RateLimiter

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


def checked(request: Request, token: str, given: str | None) -> bool | None:
    """Whether ``given`` is the admin token; a wrong one counts against the client's address
    (``app.state.admin_guesses``: ``[accounts] signin_per_minute`` a minute, as sign-ins).
    None: that address has guessed wrong too often lately, and nothing it presents is
    compared until its bucket refills, so a token cannot be guessed at request speed."""
    if not token or given is None:
        return False  # nothing presented: no guess to count
    guesses: RateLimiter = request.app.state.admin_guesses
    client = client_address(request)
    if guesses.peek(client) > 0:
        return None
    if matches(token, given):
        return True
    guesses.wait(client)
    return False


def guess_wait(request: Request) -> int:
    """Seconds until the client's address may present an admin token again (at least 1)."""
    guesses: RateLimiter = request.app.state.admin_guesses
    return max(1, math.ceil(guesses.peek(client_address(request))))


def admin_view(request: Request) -> bool:
    """Whether this request is the admin's (the template global): never with no token set.
    Worked out once per request: a page asks several times, and a wrong token counts once."""
    seen: bool | None = getattr(request.state, "admin_view", None)
    if seen is None:
        token: str = request.app.state.config.server.admin_token
        seen = bool(token) and checked(request, token, presented(request, basic=True)) is True
        request.state.admin_view = seen
    return seen


def for_visitor(note: str) -> str:
    """An engine note without the command it suggests (the templates' ``visitor`` filter)."""
    return _COMMAND_ASIDE.sub("", note)
