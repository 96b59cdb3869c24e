"""Confirming a signed-up address: mailing the link (``indexer.confirm_mail``) after sign-up
or on request from the account page, and ``/confirm``, where the link lands."""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.engine.members import Member
from papersift.indexer.confirm_mail import CONFIRM_DAYS, read_confirm_token, send_confirmation
from papersift.indexer.digest_run import MailError
from papersift.server.context import ctx
from papersift.server.sessions import accounts, member

log = logging.getLogger(__name__)


async def mail_link(request: Request, who: Member) -> str:
    """Send ``who`` the confirmation link; ``sent``, ``off`` (no mail here) or ``failed``
    (logged), for ``sent_notice`` on the account page. A code, not the text, goes into the
    redirect's address, so no one can put words on the page with a crafted link."""
    acc, c = accounts(request), ctx(request)
    if not c.config.mail.host:
        return "off"
    try:
        await c.call(send_confirmation, c.config, acc.secret, who)
    except MailError as exc:
        log.warning("confirmation link for member %d not sent: %s", who.id, exc)
        return "failed"
    return "sent"


def sent_notice(code: str, email: str) -> str:
    """What the account page says after ``mail_link`` answered ``code``."""
    if code == "sent":
        return (
            f"We sent a link to {email}; open it within {CONFIRM_DAYS} days to confirm the "
            "address. Digests start once it is confirmed."
        )
    if code == "off":
        return (
            "This server sends no e-mail ([mail] host is not set), so your address cannot be "
            "confirmed yet and no digests go out; ask the lab's admin."
        )
    return "The confirmation link could not be sent just now; try again later."


async def confirm(request: Request) -> Response:
    """Where the mailed link lands: confirms the account it names. It does not sign anyone
    in (a link in a mailbox is not a password): the account page if its member is signed
    in here, else the sign-in page, saying so."""
    acc = accounts(request)
    found = read_confirm_token(acc.secret, request.query_params.get("t", ""))
    who = await ctx(request).call(acc.members.confirm, *found) if found else None
    if who is None:
        raise HTTPException(
            400,
            "This confirmation link is not valid: it has expired (links last "
            f"{CONFIRM_DAYS} days), was cut short, or the account's address has changed. "
            "Sign in and use 'Send the link again' on your account page.",
        )
    signed = member(request)
    target = "/account" if signed is not None and signed.id == who.id else "/signin"
    return RedirectResponse(f"{target}?confirmed=1", status_code=303)


routes = [Route("/confirm", confirm, methods=["GET"])]
