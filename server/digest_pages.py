"""The digest and private feed settings (``/account/digest``) and the unsubscribe link.

Plain form posts with the session's CSRF token, each answered by a redirect back (so a
reload does not post again). The unsubscribe link needs no session: its signed token is
the proof; a GET only shows the button (mail scanners follow links), a POST unsubscribes
(also the RFC 8058 one-click post that mail programs send).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.engine.feed_tokens import KINDS
from papersift.engine.members import DIGESTS, AccountError, Member
from papersift.indexer.digest_mail import read_unsubscribe, unsubscribes
from papersift.server.account_pages import _page, _researcher
from papersift.server.context import ctx
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


def _ids(values: list[object]) -> set[int]:
    return {int(v) for v in values if isinstance(v, str) and v.isdigit() and len(v) < 12}


def _researcher_id(text: str) -> int:
    """A researcher number, or the address of their page (``/researchers/42-name``)."""
    raw = text.strip().rstrip("/").rsplit("/", 1)[-1].split("-", 1)[0]
    if not raw.isdigit() or not 0 < int(raw) < 10**9:
        raise AccountError(f"a researcher is a number such as 42, got {text[:80]!r}")
    return int(raw)


def _apply(
    request: Request, who: Member, form: dict[str, object], lists: dict[str, list[object]]
) -> str:
    """Do one posted action; returns the key of its confirmation (``DONE``)."""
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
        subs.add_search(who.id, str(form.get("query", "")))
        return "search"
    if action == "remove_search":
        subs.remove_search(who.id, next(iter(_ids([form.get("id")])), 0))
        return "unsaved"
    if action == "follow":
        rid = _researcher_id(str(form.get("researcher", "")))
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


def _context(request: Request, who: Member) -> dict[str, object]:
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
        "searches": subs.searches(who.id),
        "follows": follows,
        "private_feeds": feed_rows,
        "prefill_search": request.query_params.get("search", "")[:500],
        "prefill_follow": request.query_params.get("follow", "")[:100],
    }


@signed_in
async def settings(request: Request, who: Member) -> Response:
    c = ctx(request)
    error, status = "", 200
    if request.method == "POST":
        form = await checked_form(request)
        fields = {k: form.get(k) for k in form}
        lists: dict[str, list[object]] = {
            k: list(form.getlist(k)) for k in ("tag", "search", "researcher")
        }
        try:
            done = await c.call(_apply, request, who, fields, lists)
        except AccountError as exc:
            error, status = str(exc).capitalize() + ".", 400
        else:
            return RedirectResponse(f"/account/digest?done={done}", status_code=303)
    context = await c.call(_context, request, who)
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
