"""Sign-in, sign-out, sign-up and the account page: plain form posts, no JavaScript needed."""

from __future__ import annotations

from functools import partial

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.urls import researcher_url, with_query
from papersift.engine.members import AccountError, Member
from papersift.engine.people import People
from papersift.server.confirm_pages import mail_link, sent_notice
from papersift.server.context import ctx
from papersift.server.library_offer import note_account
from papersift.server.sessions import (
    accounts,
    checked_form,
    end,
    finish,
    safe_next,
    session,
    signed_in,
    start,
    throttle,
)
from papersift.server.templating import page_meta, render


def _text(form: object, name: str, limit: int = 2000) -> str:
    value = form.get(name) if hasattr(form, "get") else None
    return value[:limit] if isinstance(value, str) else ""


def _page(
    request: Request, template: str, title: str, status: int = 200, **context: object
) -> Response:
    meta = page_meta(
        request, title=f"{title} - papersift", description=title, path=request.url.path,
        robots="noindex,nofollow",
    )  # fmt: skip
    meta.update({"notice": "", "error": "", **context}, csrf=session(request).csrf)
    return finish(request, render(request, template, meta, status_code=status))


def _signin_page(
    request: Request, *, signup: bool, status: int = 200, error: str = "", email: str = "",
    name: str = "", next_path: str = "/library", notice: str = "",
) -> Response:  # fmt: skip
    # The setting, not ``accounts()``: opening the members file would create it, and a
    # server no one has an account on yet would seem to have some (`papersift digest`).
    domains = ctx(request).config.accounts.signup_domains
    heading = "Sign up" if signup else "Sign in"
    return _page(
        request, "signin.html", heading, status, heading=heading, signup=signup,
        action="/signup" if signup else "/signin", email=email, name=name, next=next_path,
        error=error, notice=notice, signup_open=bool(domains.split()),
    )  # fmt: skip


async def signin(request: Request) -> Response:
    if request.method == "GET":
        params = request.query_params
        notice = "Your session has ended; sign in again." if params.get("expired") else ""
        if params.get("confirmed"):
            notice = "Your address is confirmed; sign in to choose your digests."
        return _signin_page(
            request, signup=False, next_path=safe_next(params.get("next")), notice=notice
        )
    form = await checked_form(request)
    email, password = _text(form, "email", 300), _text(form, "password", 1100)
    next_path = safe_next(_text(form, "next"))
    throttle(request, email)
    acc = accounts(request)
    who = await ctx(request).call(acc.members.authenticate, email, password)
    if who is None:
        return _signin_page(
            request, signup=False, status=401, error="Wrong e-mail address or password.",
            email=email, next_path=next_path,
        )  # fmt: skip
    note_account(request)  # "Save" shows from now on, whatever the last read said
    response = RedirectResponse(next_path, status_code=303)
    start(request, response, who)
    return response


async def signout(request: Request) -> Response:
    """End this session on the server too: a copy of its cookie no longer signs in."""
    await checked_form(request)
    await ctx(request).call(end, request)
    response = RedirectResponse("/", status_code=303)
    start(request, response, None)
    return response


async def signup(request: Request) -> Response:
    if not ctx(request).config.accounts.signup_domains.split():
        raise HTTPException(404, "Sign-up is not open here; ask the lab's admin for an account.")
    if request.method == "GET":
        return _signin_page(request, signup=True)
    acc = accounts(request)
    form = await checked_form(request)
    email, name = _text(form, "email", 300), _text(form, "name", 300)
    throttle(request, email)
    error = ""
    if not acc.signup_allowed(email.strip()):
        domains = ", ".join(acc.config.signup_domains.split())
        error = f"Sign-up is open to addresses at {domains} only."
    else:
        try:
            password = _text(form, "password", 1100)
            who = await ctx(request).call(
                partial(acc.members.add, email, password, name, confirmed=False)
            )
        except AccountError as exc:
            error = str(exc).capitalize() + "."
    if error:
        return _signin_page(request, signup=True, status=400, error=error, email=email, name=name)
    note_account(request)
    sent = await mail_link(request, who)
    response = RedirectResponse(with_query("/account", {"sent": sent}), status_code=303)
    start(request, response, who)
    return response


def _researcher(request: Request, rid: int | None) -> tuple[str, str] | None:
    people = getattr(ctx(request).engine, "people", None)
    if rid is None or not isinstance(people, People):
        return None
    found = people.get(rid)
    return (found.name, researcher_url(found.rid, found.name)) if found else None


@signed_in
async def account(request: Request, who: Member) -> Response:
    acc = accounts(request)
    c = ctx(request)
    notice = error = ""
    status = 200
    if request.method == "POST":
        form = await checked_form(request)
        try:
            if _text(form, "action") == "confirm" and not who.confirmed:
                throttle(request, who.email)
                sent = await mail_link(request, who)
                return RedirectResponse(with_query("/account", {"sent": sent}), status_code=303)
            if _text(form, "action") == "password":
                if (
                    await c.call(acc.members.authenticate, who.email, _text(form, "current", 1100))
                    is None
                ):
                    raise AccountError("the current password is wrong")
                await c.call(acc.members.set_password, who.email, _text(form, "new", 1100))
                fresh = acc.members.by_id(who.id)
                assert fresh is not None
                response = RedirectResponse("/account?changed=1", status_code=303)
                start(request, response, fresh)  # other sessions end; this one goes on
                return response
            name, profile = _text(form, "name", 300), _text(form, "researcher", 300)
            await c.call(_save_profile, request, who, name, profile)
            notice = "Saved."
        except AccountError as exc:
            error, status = str(exc).capitalize() + ".", 400
    elif request.query_params.get("changed"):
        notice = "Password changed; your other sessions have ended."
    elif request.query_params.get("confirmed"):
        notice = "Your address is confirmed; digests can now be sent to it."
    elif request.query_params.get("sent"):
        notice = sent_notice(request.query_params["sent"], who.email)
    fresh = acc.members.by_id(who.id) or who
    researcher = await c.call(_researcher, request, fresh.researcher_id)
    return _page(
        request, "account.html", "Your account", status, member=fresh, researcher=researcher,
        notice=notice, error=error, mail_on=bool(c.config.mail.host),
        mail_off_said=request.query_params.get("sent") == "off",  # the notice says it
    )  # fmt: skip


def _save_profile(request: Request, who: Member, name: str, researcher: str) -> None:
    rid: int | None = None
    if researcher.strip():
        rid = researcher_id(request, researcher)
        if _researcher(request, rid) is None:
            raise AccountError(f"there is no researcher {rid} in this index")
    accounts(request).members.update(who.id, name=name, researcher_id=rid)


NAMED_SHOWN = 3  # researchers a name matching several lists, with their numbers


def researcher_id(request: Request, text: str) -> int:
    """A researcher number, the address of their page (``/researchers/42-name``), or a name
    that only one researcher's spellings hold (as the researcher directory finds them)."""
    raw = text.strip().rstrip("/").rsplit("/", 1)[-1].split("-", 1)[0]
    if raw.isdigit() and 0 < int(raw) < 10**9:
        return int(raw)
    people = getattr(ctx(request).engine, "people", None)
    name = " ".join(text.split())[:100]
    found, total = people.search(name, NAMED_SHOWN) if isinstance(people, People) else ([], 0)
    if total == 1:
        return found[0].rid
    if not total:
        raise AccountError(
            f"no researcher named {name!r} in this index: give a name as their papers spell "
            "it, their number, or the address of their page"
        )
    listed = "; ".join(f"{r.name} (number {r.rid}, {r.papers:,} papers)" for r in found)
    more = f" and {total - len(found):,} more" if total > len(found) else ""
    raise AccountError(
        f"{name!r} names {total:,} researchers: {listed}{more}; give the number of the one "
        "to follow, or follow them from their page"
    )


routes = [
    Route("/signin", signin, methods=["GET", "POST"]),
    Route("/signout", signout, methods=["POST"]),
    Route("/signup", signup, methods=["GET", "POST"]),
    Route("/account", account, methods=["GET", "POST"]),
]
