"""Private RSS feeds of the lab radar: a tag's recommendations, a member's "for you" and
"for this lab", each at an unguessable token URL made (and revoked) at /account/digest.

A feed reader has no session, so the token is the only key: a wrong, revoked or malformed
one is a 404 that says nothing about which. The body is the same RSS transform as the
public feeds (``feeds.rss``); the ranking is ``engine.radar``'s, kept per generation.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from papersift.core.urls import paper_path
from papersift.engine.feed_tokens import FeedToken
from papersift.engine.radar import RadarCache, lab_seeds, member_seeds
from papersift.engine.recommend import Recommendations
from papersift.feeds.rss import CONTENT_TYPES, FeedInfo, render_feed
from papersift.server.context import ctx
from papersift.server.sessions import Accounts, accounts
from papersift.server.urls import site_root

MAX_AGE = 900
GONE = "There is no such feed (its address may have been revoked)."


def radar_cache(request: Request) -> RadarCache:
    state = request.app.state
    found: RadarCache | None = getattr(state, "radar", None)
    if found is None:
        found = state.radar = RadarCache()
    return found


def _ranked(
    request: Request, acc: Accounts, token: FeedToken
) -> tuple[str, str, Recommendations | None]:
    """(title, page path, recommendations) of the feed a live token names."""
    c = ctx(request)
    who = acc.members.by_id(token.member_id)
    size = min(c.config.feeds.items, c.config.search.max_page_size)
    cache = radar_cache(request)
    if who is None:
        raise HTTPException(404, GONE)
    if token.kind == "tag":
        tag = acc.library.tag(who.id, token.ref)
        if tag is None:
            raise HTTPException(404, GONE)
        seeds = [s.arxiv_id for s in acc.library.saved(who.id, tag.id)]
        title, path = f"Recommended for {tag.name}", f"/library/{tag.id}/recommended"
    elif token.kind == "foryou":
        seeds = member_seeds(c.engine, acc.library, who)
        title, path = "For you", "/"
    else:
        if not c.config.lab.declared:
            raise HTTPException(404, GONE)
        seeds = lab_seeds(c.engine, c.config.lab)
        title, path = f"For {c.config.lab.name or 'this lab'}", "/"
    return title, path, cache.top(c.engine, seeds, size)


async def private_feed(request: Request) -> Response:
    raw: str = request.path_params["token"]
    acc = accounts(request)
    token = acc.feed_tokens.find(raw) if len(raw) <= 100 else None
    if token is None:
        raise HTTPException(404, GONE)
    title, path, found = await ctx(request).call(_ranked, request, acc, token)
    root = site_root(request)
    info = FeedInfo(
        title=f"papersift: {title}",
        description=f"{title}: new papers ranked by a model of your papers (private feed).",
        page_url=root + path,
        self_url=f"{root}/feeds/private/{raw}.xml",
    )
    papers = [h.paper for h in found.hits] if found else []
    body = render_feed(info, papers, "rss", lambda p: root + paper_path(p))
    headers = {"Cache-Control": f"private, max-age={MAX_AGE}", "X-Robots-Tag": "noindex"}
    return Response(body, media_type=CONTENT_TYPES["rss"], headers=headers)


routes = [Route("/feeds/private/{token}.xml", private_feed)]
