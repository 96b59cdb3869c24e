"""The digest and private feed settings (``/account/digest``) and the unsubscribe link.

Plain form posts with the session's CSRF token, each answered by a redirect back (so a
reload does not post again). The unsubscribe link needs no session: its signed token is
the proof; a GET only shows the button (mail scanners follow links), a POST unsubscribes
(also the RFC 8058 one-click post that mail programs send).

A search is saved with its mode and filters: the search page links here with its query
string (``save_search_path``), the form carries them as hidden fields, and both are read
with the search page's own parser (``server.params``), so a saved search is what the page
showed.
"""

from __future__ import annotations

from dataclasses import replace

from starlette.datastructures import FormData, QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.urls import with_query
from papersift.engine.feed_tokens import KINDS
from papersift.engine.members import DIGESTS, AccountError, Member
from papersift.engine.query_string import default_sort, query_items
from papersift.engine.results import SearchRequest
from papersift.engine.subscriptions import SavedSearch, describe_filters
from papersift.indexer.digest_mail import read_unsubscribe, unsubscribes
from papersift.server.account_pages import _page, _researcher, researcher_id
from papersift.server.context import ctx
from papersift.server.params import ParamError, parse_search
from papersift.server.sessions import accounts, checked_form, signed_in
from papersift.server.urls import site_root

DONE = {
    "saved": "Saved.",
    "search": "Search saved.",
    "unsaved": "Search removed.",
    "followed": "Following.",
    "unfollowed": "No longer following.",
    "feed": "New feed address made; any earlier one for that feed no longer works.",
    "revoked": "Feed address revoked.",
}
FEED_LABELS = {"foryou": "For you (your whole library)", "lab": "For this lab"}
# What a saved search keeps of the search page's parameters besides its words.
FILTER_PARAMS = ("mode", "category", "researcher", "researcher_id", "institution", "from", "to")


def save_search_path(req: SearchRequest) -> str:
    """This page with the form to save ``req`` filled in: its words, mode and filters."""
    plain = replace(req, page=1, page_size=None, sort=default_sort(req.query), autocorrect=True)
    return with_query("/account/digest", query_items(plain)) + "#searches"


async def _search_of(request: Request, pairs: list[tuple[str, str]]) -> SearchRequest:
    """The search that ``pairs`` (search page parameters) ask for; AccountError if bad."""
    c = ctx(request)
    try:
        return parse_search(QueryParams(pairs), c.config.search,
                            known_categories=await c.known_categories(),
                            known_institution=c.engine.holds_institution, window=False)  # fmt: skip
    except ParamError as exc:
        raise AccountError(exc.message.rstrip(".")) from None


def _saved_url(search: SavedSearch) -> str:
    return with_query("/search", query_items(replace(search.request(), sort="newest")))


def _ids(values: list[object]) -> set[int]:
    return {int(v) for v in values if isinstance(v, str) and v.isdigit() and len(v) < 12}


def _apply(
    request: Request, who: Member, form: dict[str, object], lists: dict[str, list[object]],
    search: SearchRequest,
) -> str:  # fmt: skip
    """Do one posted action (``search``: the one to save); returns the key of its
    confirmation (``DONE``)."""
    acc = accounts(request)
    subs, tokens = acc.subscriptions, acc.feed_tokens
    action = form.get("action")
    if action == "choices":
        digest = str(form.get("digest", ""))
        if digest not in DIGESTS:
            raise AccountError(f"choose a digest: {', '.join(DIGESTS)}")
        acc.members.update(who.id, digest=digest)
        subs.choose(who.id, _ids(lists["tag"]), _ids(lists["search"]), _ids(lists["researcher"]))
        return "saved"
    if action == "add_search":
        subs.add_search(who.id, search.query, search.mode, search.filters)
        return "search"
    if action == "remove_search":
        subs.remove_search(who.id, next(iter(_ids([form.get("id")])), 0))
        return "unsaved"
    if action == "follow":
        rid = researcher_id(request, str(form.get("researcher", "")))
        if _researcher(request, rid) is None:
            raise AccountError(f"there is no researcher {rid} in this index")
        subs.follow(who.id, rid)
        return "followed"
    if action == "unfollow":
        subs.unfollow(who.id, next(iter(_ids([form.get("researcher")])), 0))
        return "unfollowed"
    if action in ("feed_new", "feed_revoke"):
        kind = str(form.get("kind", ""))
        ref = next(iter(_ids([form.get("ref")])), 0) if kind == "tag" else 0
        if kind not in KINDS or (kind == "tag" and acc.library.tag(who.id, ref) is None):
            raise HTTPException(404, "You have no such feed; see /account/digest for yours.")
        if action == "feed_new":
            tokens.issue(who.id, kind, ref)
            return "feed"
        tokens.revoke(who.id, kind, ref)
        return "revoked"
    raise AccountError("unknown action; reload the page and try again")


def _context(request: Request, who: Member, prefill: SearchRequest) -> dict[str, object]:
    prefill_follow = request.query_params.get("follow", "")[:100]
    number = prefill_follow.isdigit() and len(prefill_follow) < 10
    asked = _researcher(request, int(prefill_follow)) if number else None
    acc = accounts(request)
    subs = acc.subscriptions
    choice = subs.choice(who.id)
    tags = acc.library.tags(who.id)
    follows = []
    for f in subs.follows(who.id):
        found = _researcher(request, f.researcher_id)
        name, url = found if found else (f"researcher {f.researcher_id}", "")
        follows.append((f, name, url))
    live = acc.feed_tokens.of(who.id)
    root = site_root(request)
    feeds = [(kind, 0, label) for kind, label in FEED_LABELS.items()]
    feeds += [("tag", t.id, f"Recommended for {t.name}") for t in tags]
    feed_rows = [
        (
            kind,
            ref,
            label,
            f"{root}/feeds/private/{live[kind, ref]}.xml" if (kind, ref) in live else "",
        )
        for kind, ref, label in feeds
    ]
    config = ctx(request).config
    return {
        "member": acc.members.by_id(who.id) or who,
        "mail_on": bool(config.mail.host),
        "lab_on": config.lab.declared,
        "tags": tags,
        "chosen_tags": set(choice.tag_ids),
        "searches": [(s, _saved_url(s), s.describe()) for s in subs.searches(who.id)],
        "follows": follows,
        "private_feeds": feed_rows,
        "prefill_search": prefill.query,
        # The filters go along as hidden fields, said in words beside the box.
        "prefill_filters": query_items(
            SearchRequest(mode=prefill.mode, filters=prefill.filters, sort="newest")
        ),
        "prefill_described": describe_filters(prefill.mode, prefill.filters),
        "prefill_words_only": with_query("/account/digest", {"q": prefill.query}) + "#searches",
        "prefill_follow": prefill_follow,
        "prefill_follow_name": asked[0] if asked else "",  # a researcher page's link
    }


async def _prefill(request: Request) -> SearchRequest:
    """The search a link from the search page asks to save (``?search=`` is the words alone,
    as links made before filters were kept)."""
    params = request.query_params
    pairs = [(k, v) for k in ("q", *FILTER_PARAMS) for v in params.getlist(k)]
    if "q" not in params and "search" in params:
        pairs.append(("q", params["search"]))
    return await _search_of(request, pairs) if pairs else SearchRequest()


def _posted_search(form: FormData) -> list[tuple[str, str]]:
    pairs = [(k, v) for k in ("query", *FILTER_PARAMS) for v in form.getlist(k)]
    return [("q" if k == "query" else k, v) for k, v in pairs if isinstance(v, str)]


@signed_in
async def settings(request: Request, who: Member) -> Response:
    c = ctx(request)
    error, status = "", 200
    prefill = SearchRequest()
    try:
        if request.method == "POST":
            form = await checked_form(request)
            fields = {k: form.get(k) for k in form}
            lists: dict[str, list[object]] = {
                k: list(form.getlist(k)) for k in ("tag", "search", "researcher")
            }
            if fields.get("action") == "add_search":
                prefill = await _search_of(request, _posted_search(form))
            done = await c.call(_apply, request, who, fields, lists, prefill)
            return RedirectResponse(f"/account/digest?done={done}", status_code=303)
        prefill = await _prefill(request)
    except AccountError as exc:
        text = str(exc)  # not capitalize(): it would lower a category's or a name's case
        error, status = f"{text[:1].upper()}{text[1:]}.", 400
    context = await c.call(_context, request, who, prefill)
    notice = DONE.get(request.query_params.get("done", ""), "")
    return _page(request, "digest.html", "Digests and private feeds", status, notice=notice,
                 error=error, **context)  # fmt: skip


async def unsubscribe(request: Request) -> Response:
    """GET: a button to stop the digests; POST: stop them. A bad token is a 404."""
    acc = accounts(request)
    token = request.query_params.get("t", "")
    if request.method == "POST":
        form = await request.form(max_fields=5, max_files=0)
        posted = form.get("t")
        token = posted if isinstance(posted, str) and posted else token
    signed = read_unsubscribe(acc.secret, token)
    who = acc.members.by_id(signed[0]) if signed is not None else None
    if who is None or signed is None or not unsubscribes(who, signed[1]):
        raise HTTPException(404, "This unsubscribe link is not valid (or its account is gone).")
    done = False
    if request.method == "POST":
        await ctx(request).call(lambda: acc.members.update(who.id, digest="off"))
        done = True
    return _page(request, "unsubscribe.html", "Unsubscribe", email=who.email, token=token,
                 done=done, digest=who.digest)  # fmt: skip


routes = [
    Route("/account/digest", settings, methods=["GET", "POST"]),
    Route("/digest/unsubscribe", unsubscribe, methods=["GET", "POST"]),
]
