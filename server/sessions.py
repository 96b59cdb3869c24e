"""Sign-in state: a signed session cookie, the CSRF token of every form, sign-in limits.

The cookie holds ``{"m": member id or None, "e": the member's epoch, "s": a random session
id, "c": a random CSRF nonce}``, signed with ``itsdangerous`` (HMAC-SHA1 over a timestamp, so
a cookie older than ``[accounts] session_days`` is refused) and sent ``HttpOnly;
SameSite=Lax`` (and ``Secure`` over HTTPS). The server keeps only the ids of signed-out
sessions (``engine.signouts``), refused until they expire; the member's other sessions go
on. A password reset ends every session because the epoch moves on; a removed account's
end with it, and as every account's epoch is random from the start, a later account that
gets the same id fits none of them. A member cookie without a session id (signed before
sign-out was recorded) is refused: it could not be signed out. Every form carries the session's
nonce; a post without it, or with another session's, is refused with ``403`` (SameSite=Lax
already keeps cross-site posts from carrying the cookie; the token covers older browsers
and same-site attackers). Anonymous visitors get a session (no member) on the pages with a
form, so sign-in and sign-up are protected too.
"""

from __future__ import annotations

import functools
import hmac
import math
import secrets
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from papersift.engine.feed_tokens import FeedTokens
from papersift.engine.library import Library
from papersift.engine.members import Member, Members, load_secret
from papersift.engine.signouts import SignOuts
from papersift.engine.subscriptions import Subscriptions
from papersift.server.context import ctx
from papersift.server.ratelimit import RateLimiter
from papersift.server.urls import client_address

COOKIE = "papersift_session"
PRIVATE = "private, no-store"  # pages for one member: never kept by a shared cache
MAX_FORM_FIELDS = 50


@dataclass(frozen=True, slots=True)
class Session:
    member: Member | None
    csrf: str
    fresh: bool  # not from a valid cookie: the response must set it
    expired: bool = False  # a cookie came but was too old, forged or of an ended sign-in
    sid: str = ""  # random: what signing out records (``engine.signouts``)
    issued: int = 0  # when the cookie was signed (Unix seconds): when the record may go


@dataclass(frozen=True, slots=True)
class _Opened:
    """The members file and the stores over it, opened together."""

    members: Members
    library: Library
    subscriptions: Subscriptions
    feed_tokens: FeedTokens
    signouts: SignOuts


class Accounts:
    """Held in ``app.state.accounts``; the members file opens on first use: a page that
    only shows a form (sign-in with no cookie) must not create it, or a server no one has
    an account on would seem to have some (``papersift digest``, the library offer)."""

    def __init__(self, request: Request) -> None:
        config = ctx(request).config
        self.config = config.accounts
        root = self.root = config.data_dir
        self._opened: _Opened | None = None
        self._lock = threading.Lock()
        self.secret = load_secret(root, self.config.secret_key)  # also signs unsubscribe links
        self.signer = URLSafeTimedSerializer(self.secret, salt="papersift-session")
        self.by_address = RateLimiter(self.config.signin_per_minute)
        self.by_email = RateLimiter(self.config.signin_per_minute)

    def _open(self) -> _Opened:
        with self._lock:
            if self._opened is None:
                members = Members(self.root)
                self._opened = _Opened(
                    members, Library(members), Subscriptions(members), FeedTokens(members),
                    SignOuts(members),
                )  # fmt: skip
            return self._opened

    @property
    def members(self) -> Members:
        return self._open().members

    @property
    def library(self) -> Library:
        return self._open().library

    @property
    def subscriptions(self) -> Subscriptions:
        return self._open().subscriptions

    @property
    def feed_tokens(self) -> FeedTokens:
        return self._open().feed_tokens

    @property
    def signouts(self) -> SignOuts:
        return self._open().signouts

    @property
    def max_age(self) -> int:
        return self.config.session_days * 86400

    def signup_allowed(self, email: str) -> bool:
        domains = {d.lower().lstrip("@") for d in self.config.signup_domains.split()}
        return bool(domains) and email.rsplit("@", 1)[-1].lower() in domains


def accounts(request: Request) -> Accounts:
    state = request.app.state
    found: Accounts | None = getattr(state, "accounts", None)
    if found is None:
        found = state.accounts = Accounts(request)
    return found


def session(request: Request) -> Session:
    """This request's session, read (and checked against the member's epoch and the
    signed-out sessions) once."""
    cached: Session | None = request.scope.get("papersift.session")
    if cached is not None:
        return cached
    acc = accounts(request)
    raw = request.cookies.get(COOKIE)
    result: Session | None = None
    if raw:
        try:
            data: Any
            data, signed = acc.signer.loads(raw, max_age=acc.max_age, return_timestamp=True)
        except (SignatureExpired, BadSignature):
            data = None
        if isinstance(data, dict) and isinstance(data.get("c"), str):
            mid, epoch, sid = data.get("m"), data.get("e"), data.get("s")
            sid = sid if isinstance(sid, str) else ""
            issued = int(signed.timestamp())
            member = acc.members.by_id(mid) if isinstance(mid, int) else None
            if (
                member is not None and member.epoch == epoch and sid
                and not acc.signouts.ended(sid)
            ):  # fmt: skip
                result = Session(member, data["c"], False, sid=sid, issued=issued)
            elif mid is None:
                result = Session(None, data["c"], False, sid=sid, issued=issued)
    if result is None:
        result = Session(None, secrets.token_urlsafe(18), True, expired=bool(raw), sid=_sid())
    request.scope["papersift.session"] = result
    return result


def member(request: Request) -> Member | None:
    return session(request).member


def _sid() -> str:
    return secrets.token_urlsafe(16)


def start(request: Request, response: Response, who: Member | None) -> None:
    """Set a new session cookie for ``who`` (None: signed out) with a new id and CSRF nonce."""
    fresh = Session(who, secrets.token_urlsafe(18), False, sid=_sid())
    request.scope["papersift.session"] = fresh
    _set_cookie(request, response, fresh)


def end(request: Request) -> None:
    """Sign this session out on the server: its cookie, or any copy, is refused from now on
    (the member's other sessions go on)."""
    s, acc = session(request), accounts(request)
    if s.member is not None and s.sid:
        acc.signouts.end(s.sid, s.issued, acc.max_age)


def _set_cookie(request: Request, response: Response, s: Session) -> None:
    acc = accounts(request)
    payload = {"m": s.member.id if s.member else None, "e": s.member.epoch if s.member else 0}
    value = acc.signer.dumps({**payload, "s": s.sid, "c": s.csrf})
    response.set_cookie(
        COOKIE, value, max_age=acc.max_age, path="/", httponly=True, samesite="lax",
        secure=request.url.scheme == "https",
    )  # fmt: skip


def finish(request: Request, response: Response) -> Response:
    """Mark a member's page private and set the session cookie if it is new."""
    response.headers["Cache-Control"] = PRIVATE
    if "etag" in response.headers:
        del response.headers["etag"]
    s = session(request)
    if s.fresh:
        _set_cookie(request, response, s)
    return response


async def checked_form(request: Request) -> FormData:
    """The posted form, if its CSRF token is this session's; else a 403 that says why."""
    try:
        form = await request.form(max_fields=MAX_FORM_FIELDS, max_files=1)
    except HTTPException:
        raise
    except Exception:  # python-multipart's parse errors: a malformed body
        raise HTTPException(
            400, "The form could not be read; reload the page and try again."
        ) from None
    token = form.get("csrf")
    s = session(request)
    if not isinstance(token, str) or not token:
        raise HTTPException(
            403, "The form lacks its security token; reload the page and try again."
        )
    if s.fresh or not hmac.compare_digest(token.encode(), s.csrf.encode()):
        why = "your session has expired" if s.fresh else "it was made for another session"
        raise HTTPException(
            403, f"This form is no longer valid ({why}); reload the page and try again."
        )
    return form


def throttle(request: Request, email: str) -> None:
    """Count one sign-in (or sign-up) attempt; 429 past the limit, per address and e-mail."""
    acc = accounts(request)
    wait = max(
        acc.by_address.wait(client_address(request)), acc.by_email.wait(email.strip().lower())
    )
    if wait > 0:
        seconds = math.ceil(wait)
        raise HTTPException(
            429,
            f"Too many sign-in attempts; wait {seconds} second{'s' if seconds != 1 else ''} "
            "and try again.",
            headers={"Retry-After": str(seconds)},
        )


def require(request: Request) -> Member | RedirectResponse:
    """The signed-in member, or a redirect to the sign-in page that comes back here."""
    s = session(request)
    if s.member is not None:
        return s.member
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    note = "&expired=1" if s.expired else ""
    from urllib.parse import quote

    return RedirectResponse(f"/signin?next={quote(target, safe='')}{note}", status_code=303)


def signed_in(
    handler: Callable[[Request, Member], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """A route for members: the handler gets the signed-in member; anyone else goes to the
    sign-in page (``require``)."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        who = require(request)
        if isinstance(who, Response):
            return who
        return await handler(request, who)

    return route


def safe_next(target: str | None) -> str:
    """A local path to go to after signing in (never another site: ``//evil`` is refused)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/library"
    return target
