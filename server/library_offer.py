"""Whether the pages offer "Save" and the "Library" link: only where someone can sign in.

A lab that never ran ``papersift user add`` and has no ``[accounts] signup_domains`` has no
account anyone could sign in with, so "Save" and "Library" would lead to a sign-in page
nobody can pass: the pages leave them out there, and show them to signed-out visitors as
soon as an account exists (they lead to the sign-in). The answer is one per install, not
per visitor, so the search and paper pages stay shared and cacheable (``server.page_cache``
keys them by it).

Reading the members file takes ~0.3 ms (a read-only SQLite connection of its own, so a
server whose lab has no accounts never creates the file), too much for every page: a
middleware reads it off the event loop at most once per ``POLL`` seconds, before a page that
shows the links renders, and the templates read the kept answer (``offers_library``). An
account made by ``papersift user add`` in another process shows within ``POLL``; a sign-in
or sign-up here shows at once (``note_account``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from papersift.engine.members import accounts_exist
from papersift.server.context import AppContext

POLL = 1.0  # seconds between reads of the members file
_NO_PAGE = ("/static/", "/api/")  # paths whose answers never show the links


@dataclass
class _Known:
    offered: bool = False
    read_at: float = -POLL


def _known(state: object) -> _Known:
    found: _Known | None = getattr(state, "library_offer", None)
    if found is None:
        found = _Known()
        state.library_offer = found  # type: ignore[attr-defined]
    return found


async def refresh(state: object) -> bool:
    """The answer, read again if it is older than ``POLL`` (``state``: ``app.state``)."""
    known = _known(state)
    c: AppContext = state.ctx  # type: ignore[attr-defined]
    if c.config.accounts.signup_domains.split():
        known.offered = True  # anyone at those domains can make an account
        return True
    now = time.monotonic()
    if now - known.read_at >= POLL:
        known.read_at = now  # before the read: requests meanwhile keep the last answer
        found = await c.call(accounts_exist, c.config.data_dir)
        if found is not None:  # unreadable for now (locked): the last answer stands
            known.offered = found
    return known.offered


def offers_library(request: Request) -> bool:
    """The template global: the answer as last read (``LibraryOfferMiddleware`` keeps it
    fresh), with no I/O."""
    return _known(request.app.state).offered


def note_account(request: Request) -> None:
    """Someone signed in or signed up here: accounts exist, whatever the last read said."""
    known = _known(request.app.state)
    known.offered, known.read_at = True, time.monotonic()


class LibraryOfferMiddleware:
    """Refresh the answer before a request for a page (pure ASGI: ~1 µs a request when the
    answer is fresh)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith(_NO_PAGE):
            await refresh(scope["app"].state)
        await self.app(scope, receive, send)
