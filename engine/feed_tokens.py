"""Private feed tokens: the unguessable part of a member's private RSS URLs, revocable.

A token is ``<key>.<secret>`` (both ``secrets.token_urlsafe``). The key finds the row; the
secret is compared with ``hmac.compare_digest``, so the lookup's timing tells nothing about
the secret. Regenerating replaces the row: the old URL stops working at once.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from papersift.engine.members import Members, now_iso

KINDS = ("tag", "foryou", "lab")  # a tag's recommendations, the whole library, the lab
MAX_TOKEN = 100


@dataclass(frozen=True, slots=True)
class FeedToken:
    token: str
    member_id: int
    kind: str
    ref: int  # the tag id for kind "tag", else 0


class FeedTokens:
    def __init__(self, members: Members) -> None:
        self.members = members

    def of(self, member_id: int) -> dict[tuple[str, int], str]:
        """The member's live tokens by (kind, ref)."""
        rows = self.members.query(
            "SELECT kind, ref, key, secret FROM feed_tokens WHERE user_id = ?", (member_id,)
        )
        return {(str(k), int(r)): f"{key}.{sec}" for k, r, key, sec in rows}  # type: ignore[call-overload]

    def issue(self, member_id: int, kind: str, ref: int = 0) -> str:
        """A new token for this feed, replacing (revoking) any earlier one."""
        if kind not in KINDS:
            raise ValueError(kind)
        key, secret = secrets.token_urlsafe(9), secrets.token_urlsafe(24)
        with self.members.transaction() as db:
            db.execute(
                "DELETE FROM feed_tokens WHERE user_id = ? AND kind = ? AND ref = ?",
                (member_id, kind, ref),
            )
            db.execute(
                "INSERT INTO feed_tokens (key, secret, user_id, kind, ref, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, secret, member_id, kind, ref, now_iso()),
            )
        return f"{key}.{secret}"

    def revoke(self, member_id: int, kind: str, ref: int = 0) -> bool:
        with self.members.transaction() as db:
            cur = db.execute(
                "DELETE FROM feed_tokens WHERE user_id = ? AND kind = ? AND ref = ?",
                (member_id, kind, ref),
            )
            return cur.rowcount > 0

    def find(self, token: str) -> FeedToken | None:
        """The live token equal to ``token``; None for a wrong, revoked or malformed one."""
        key, _, secret = token[:MAX_TOKEN].partition(".")
        if not key or not secret:
            return None
        rows = self.members.query(
            "SELECT secret, user_id, kind, ref FROM feed_tokens WHERE key = ?", (key,)
        )
        if not rows or not hmac.compare_digest(str(rows[0][0]).encode(), secret.encode()):
            return None
        _, member_id, kind, ref = rows[0]
        return FeedToken(token, int(member_id), str(kind), int(ref))  # type: ignore[call-overload]
