"""A digest as an e-mail (stdlib ``email``): plain text and HTML alternatives, links to the
papers on this site, and an unsubscribe link carrying a signed token.

Every value from a paper, a tag or a query is escaped in the HTML part. The unsubscribe
token is the member's id and a part of their account's random token, signed with the site's
secret (``itsdangerous``, which compares signatures in constant time); it does not expire,
so an old digest's link still works, and needs no session. The account token's part keeps
an old link from reaching a later account that got the same id.
"""

from __future__ import annotations

import hmac
import html
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import formataddr, make_msgid
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer

from papersift.core.paper import Paper
from papersift.core.tex import plain_text
from papersift.core.urls import paper_path, with_query
from papersift.core.wording import counted
from papersift.engine.members import Member
from papersift.indexer.digest import Digest

UNSUBSCRIBE_SALT = "papersift-unsubscribe"
MAX_TOKEN = 200
KEY_CHARS = 8
# RFC 5322's limit for a line; 78 is only its "should".
MAX_HEADER_LINE = 998
ONE_LINE_HEADERS = frozenset({"list-unsubscribe"})


class DigestPolicy(EmailPolicy):
    """The email package's default policy, except that List-Unsubscribe stays one line.

    A URL is one word with nowhere to fold it, so past 78 characters the default policy
    writes it as RFC 2047 encoded words (``=?utf-8?q?=3Chttp...?=``), which RFC 2047 itself
    allows in free text only, not in a URL, and which RFC 2369/8058 readers (a mail
    program's unsubscribe button) take literally. For that header the line may run to RFC
    5322's 998 characters; every other header, and the body's encoding, keep the 78.
    """

    def _for(self, name: str) -> EmailPolicy:
        if name.lower() in ONE_LINE_HEADERS:
            return self.clone(max_line_length=MAX_HEADER_LINE)
        return self

    def fold(self, name: str, value: str) -> str:
        folded: str = EmailPolicy.fold(self._for(name), name, value)
        return folded

    def fold_binary(self, name: str, value: str) -> bytes:  # what smtplib's generator calls
        return EmailPolicy.fold_binary(self._for(name), name, value)


DIGEST_POLICY = DigestPolicy()


def unsubscribe_token(secret: str, member: Member) -> str:
    payload = {"m": member.id, "k": member.token[:KEY_CHARS]}
    return URLSafeSerializer(secret, salt=UNSUBSCRIBE_SALT).dumps(payload)


def read_unsubscribe(secret: str, token: str) -> tuple[int, str] | None:
    """(member id, account token part) a token was signed for; None if forged or malformed."""
    if not token or len(token) > MAX_TOKEN:
        return None
    try:
        data: Any = URLSafeSerializer(secret, salt=UNSUBSCRIBE_SALT).loads(token)
    except BadSignature:
        return None
    if not isinstance(data, dict):
        return None
    mid, key = data.get("m"), data.get("k")
    if not isinstance(mid, int) or isinstance(mid, bool) or not isinstance(key, str):
        return None
    return mid, key


def unsubscribes(member: Member, key: str) -> bool:
    """Whether a token's account part is this member's (compared in constant time)."""
    return hmac.compare_digest(member.token[:KEY_CHARS].encode(), key.encode())


def _authors(paper: Paper, limit: int = 4) -> str:
    names = [a.name for a in paper.authors[:limit]]
    return ", ".join(names) + (" et al." if len(paper.authors) > limit else "")


def _titles(papers: tuple[Paper, ...]) -> str:
    return "; ".join(plain_text(p.title) for p in papers)


def digest_text(digest: Digest, base_url: str, unsubscribe: str) -> str:
    """The plain-text part (also what ``papersift digest --dry-run`` prints)."""
    what = "Daily" if digest.window.kind == "daily" else "Weekly"
    lines = [f"{what} papers for {digest.member.name or digest.member.email}, "
             f"{digest.window.label()}", ""]  # fmt: skip
    for section in digest.sections:
        lines += [section.title, "-" * min(len(section.title), 72)]
        for i, p in enumerate(section.papers, 1):
            lines.append(f"{i}. {plain_text(p.title)}")
            lines.append(f"   {_authors(p)} ({p.published.isoformat()})")
            lines.append(f"   {base_url}{paper_path(p)}")
            if also := digest.also_in(p):
                lines.append(f"   Also in: {'; '.join(also)}")
        if section.listed_above:
            lines.append(f"Listed above: {_titles(section.listed_above)}")
        lines += [f"All of them: {base_url}{section.path}", ""]
    lines += [
        "--",
        f"Choose what this digest holds: {base_url}/account/digest",
        f"Unsubscribe: {unsubscribe}",
    ]
    return "\n".join(lines) + "\n"


def _item_html(digest: Digest, paper: Paper, base_url: str) -> str:
    e = html.escape
    also = digest.also_in(paper)
    return (
        f'<li><a href="{e(base_url + paper_path(paper))}">{e(plain_text(paper.title))}</a><br>'
        f"<small>{e(_authors(paper))} · {e(paper.published.isoformat())}"
        + (f'<br><span class="also">Also in: {e("; ".join(also))}</span>' if also else "")
        + "</small></li>"
    )


def digest_html(digest: Digest, base_url: str, unsubscribe: str) -> str:
    e = html.escape
    what = "Daily" if digest.window.kind == "daily" else "Weekly"
    out = [
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>',
        f"<h1>{e(what)} papers, {e(digest.window.label())}</h1>",
    ]
    for section in digest.sections:
        items = "".join(_item_html(digest, p, base_url) for p in section.papers)
        out.append(f"<h2>{e(section.title)}</h2>" + (f"<ol>{items}</ol>" if items else ""))
        if section.listed_above:
            above = e(_titles(section.listed_above))
            out.append(f'<p class="listed-above">Listed above: {above}</p>')
        out.append(f'<p><a href="{e(base_url + section.path)}">All of them</a></p>')
    out.append(
        f'<hr><p><small><a href="{e(base_url)}/account/digest">Choose what this digest '
        f'holds</a> · <a href="{e(unsubscribe)}">Unsubscribe</a></small></p></body></html>'
    )
    return "\n".join(out)


def digest_message(digest: Digest, *, sender: str, base_url: str, secret: str) -> EmailMessage:
    """The message to send: text and HTML, with List-Unsubscribe (RFC 2369 and 8058)."""
    token = unsubscribe_token(secret, digest.member)
    unsubscribe = with_query(f"{base_url}/digest/unsubscribe", {"t": token})
    msg = EmailMessage(policy=DIGEST_POLICY)
    what = "daily" if digest.window.kind == "daily" else "weekly"
    news = counted(digest.papers, "new paper")
    msg["Subject"] = f"papersift: {news} ({what}, {digest.window.label()})"
    msg["From"] = sender
    msg["To"] = formataddr((digest.member.name, digest.member.email))
    msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].strip("> ") or None)
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["X-Papersift-Window"] = digest.window.key
    msg.set_content(digest_text(digest, base_url, unsubscribe))
    msg.add_alternative(digest_html(digest, base_url, unsubscribe), subtype="html")
    return msg
