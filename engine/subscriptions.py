"""What a member follows and what their digest holds: saved searches (their words, search
mode and filters), followed researchers, the tags chosen for the digest, and the record of
digests sent (tables in ``engine.members_schema``).

Like the library, every read and write takes the member's id, so one member never reaches
another's rows. The send record is what keeps a digest from going out twice for the same
window (``indexer.digest_run`` says in which order it is written).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date

from papersift.engine.library import Library
from papersift.engine.members import AccountError, Members, now_iso
from papersift.engine.results import MODES, Filters, Mode, SearchRequest

MAX_QUERY = 500
MAX_SEARCHES = 50  # per member
MAX_FOLLOWS = 200  # per member
NO_FILTERS = Filters()


@dataclass(frozen=True, slots=True)
class SavedSearch:
    id: int
    query: str
    in_digest: bool
    mode: Mode | None = None  # None: the configured default, as on the search page
    # Dates too: a digest keeps the part of its window inside them.
    filters: Filters = field(default_factory=Filters)

    def request(self) -> SearchRequest:
        """The search as saved (its page and sort are not kept)."""
        return SearchRequest(query=self.query, mode=self.mode, filters=self.filters)

    def describe(self) -> str:
        """``“mirror symmetry” in hep-th, from 1995-01-01, keyword search``."""
        words = f"“{self.query}”" if self.query else "all papers"
        return f"{words} {describe_filters(self.mode, self.filters)}".strip()


def describe_filters(mode: Mode | None, f: Filters) -> str:
    """``in hep-th, from 1995-01-01, keyword search``; '' for none."""
    parts = [
        "in " + " or ".join(f.categories) if f.categories else "",
        "by " + " and ".join(f.researchers) if f.researchers else "",
        "by researcher " + " and ".join(map(str, f.researcher_ids)) if f.researcher_ids else "",
        "at institution " + " and ".join(f.institutions) if f.institutions else "",
        f"from {f.date_from.isoformat()}" if f.date_from else "",
        f"to {f.date_to.isoformat()}" if f.date_to else "",
        f"{mode} search" if mode else "",
    ]
    return ", ".join(p for p in parts if p)


def _encode(mode: Mode | None, filters: Filters) -> str:
    """The ``filters`` column: JSON with the search page's parameter names ('' for none),
    canonical, so the same filters are the same text (and one saved search)."""
    data: dict[str, object] = {
        "mode": mode or "",
        "category": list(filters.categories),
        "researcher": list(filters.researchers),
        "researcher_id": list(filters.researcher_ids),
        "institution": list(filters.institutions),
        "from": filters.date_from.isoformat() if filters.date_from else "",
        "to": filters.date_to.isoformat() if filters.date_to else "",
    }
    kept = {k: v for k, v in data.items() if v}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False) if kept else ""


def _decode(text: str) -> tuple[Mode | None, Filters]:
    data = json.loads(text) if text else {}
    mode = next((m for m in MODES if m == data.get("mode")), None)
    day = {k: date.fromisoformat(data[k]) if data.get(k) else None for k in ("from", "to")}
    return mode, Filters(
        categories=tuple(data.get("category", ())),
        researchers=tuple(data.get("researcher", ())),
        date_from=day["from"],
        date_to=day["to"],
        researcher_ids=tuple(int(r) for r in data.get("researcher_id", ())),
        institutions=tuple(data.get("institution", ())),
    )


@dataclass(frozen=True, slots=True)
class Follow:
    researcher_id: int
    in_digest: bool


@dataclass(frozen=True, slots=True)
class DigestChoice:
    """What goes into one member's digest (only their own rows)."""

    tag_ids: tuple[int, ...]
    searches: tuple[SavedSearch, ...]
    researchers: tuple[int, ...]

    @property
    def empty(self) -> bool:
        return not (self.tag_ids or self.searches or self.researchers)


class Subscriptions:
    """Saved searches, follows, digest choices and sends of the members in ``members``."""

    def __init__(self, members: Members) -> None:
        self.members = members
        self.library = Library(members)

    # -- saved searches -----------------------------------------------------------------

    def searches(self, member_id: int) -> list[SavedSearch]:
        rows = self.members.query(
            "SELECT id, query, in_digest, filters FROM searches WHERE user_id = ? "
            "ORDER BY query, filters",
            (member_id,),
        )
        out = []
        for i, q, d, f in rows:
            mode, filters = _decode(str(f))
            out.append(SavedSearch(int(i), str(q), bool(d), mode, filters))  # type: ignore[call-overload]
        return out

    def add_search(
        self, member_id: int, query: str, mode: Mode | None = None, filters: Filters = NO_FILTERS
    ) -> SavedSearch:
        """Save a search: its words, or its filters alone (a category's new papers)."""
        text = " ".join(query.split())
        if not text and filters.empty:
            raise AccountError("type the search to save")
        if len(text) > MAX_QUERY:
            raise AccountError(f"a saved search has at most {MAX_QUERY} characters")
        key = _encode(mode, filters)
        with self.members.transaction() as db:
            (n,) = db.execute(
                "SELECT COUNT(*) FROM searches WHERE user_id = ?", (member_id,)
            ).fetchone()
            if n >= MAX_SEARCHES:
                raise AccountError(f"at most {MAX_SEARCHES} saved searches")
            db.execute(
                "INSERT OR IGNORE INTO searches (user_id, query, filters, created) "
                "VALUES (?, ?, ?, ?)",
                (member_id, text, key, now_iso()),
            )
        return next(
            s for s in self.searches(member_id)
            if s.query == text and _encode(s.mode, s.filters) == key
        )  # fmt: skip

    def remove_search(self, member_id: int, search_id: int) -> bool:
        with self.members.transaction() as db:
            cur = db.execute(
                "DELETE FROM searches WHERE id = ? AND user_id = ?", (search_id, member_id)
            )
            return cur.rowcount > 0

    # -- followed researchers -----------------------------------------------------------

    def follows(self, member_id: int) -> list[Follow]:
        rows = self.members.query(
            "SELECT researcher_id, in_digest FROM follows WHERE user_id = ? ORDER BY created",
            (member_id,),
        )
        return [Follow(int(r), bool(d)) for r, d in rows]  # type: ignore[call-overload]

    def follow(self, member_id: int, researcher_id: int) -> None:
        with self.members.transaction() as db:
            (n,) = db.execute(
                "SELECT COUNT(*) FROM follows WHERE user_id = ?", (member_id,)
            ).fetchone()
            if n >= MAX_FOLLOWS:
                raise AccountError(f"at most {MAX_FOLLOWS} followed researchers")
            db.execute(
                "INSERT OR IGNORE INTO follows (user_id, researcher_id, created) VALUES (?, ?, ?)",
                (member_id, researcher_id, now_iso()),
            )

    def unfollow(self, member_id: int, researcher_id: int) -> bool:
        with self.members.transaction() as db:
            cur = db.execute(
                "DELETE FROM follows WHERE user_id = ? AND researcher_id = ?",
                (member_id, researcher_id),
            )
            return cur.rowcount > 0

    # -- the digest's contents ----------------------------------------------------------

    def choice(self, member_id: int) -> DigestChoice:
        tags = self.members.query(
            "SELECT d.tag_id FROM digest_tags d JOIN tags t ON t.id = d.tag_id "
            "WHERE t.user_id = ? ORDER BY t.name COLLATE NOCASE",
            (member_id,),
        )
        return DigestChoice(
            tag_ids=tuple(int(r[0]) for r in tags),  # type: ignore[call-overload]
            searches=tuple(s for s in self.searches(member_id) if s.in_digest),
            researchers=tuple(f.researcher_id for f in self.follows(member_id) if f.in_digest),
        )

    def choose(
        self, member_id: int, tag_ids: set[int], search_ids: set[int], researcher_ids: set[int]
    ) -> None:
        """Set what goes in the digest; ids that are not the member's are ignored."""
        own_tags = {t.id for t in self.library.tags(member_id)}
        with self.members.transaction() as db:
            db.execute(
                "DELETE FROM digest_tags WHERE tag_id IN (SELECT id FROM tags WHERE user_id = ?)",
                (member_id,),
            )
            db.executemany(
                "INSERT INTO digest_tags (tag_id) VALUES (?)",
                [(t,) for t in sorted(tag_ids & own_tags)],
            )
            for table, column, chosen in (
                ("searches", "id", search_ids),
                ("follows", "researcher_id", researcher_ids),
            ):
                rows = db.execute(f"SELECT {column} FROM {table} WHERE user_id = ?", (member_id,))
                for (key,) in rows.fetchall():
                    db.execute(
                        f"UPDATE {table} SET in_digest = ? WHERE user_id = ? AND {column} = ?",
                        (int(key in chosen), member_id, key),
                    )

    # -- sends --------------------------------------------------------------------------

    def claim(self, member_id: int, window: str) -> bool:
        """Record that this window's digest is being sent; False if it already was."""
        with self.members.transaction() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO digest_sent (user_id, window, sent_at, state) "
                "VALUES (?, ?, ?, 'sending')",
                (member_id, window, now_iso()),
            )
            return cur.rowcount > 0

    def sent(self, member_id: int, window: str) -> None:
        with self.members.transaction() as db:
            db.execute(
                "UPDATE digest_sent SET state = 'sent', sent_at = ? "
                "WHERE user_id = ? AND window = ?",
                (now_iso(), member_id, window),
            )

    def release(self, member_id: int, window: str) -> None:
        """Forget a claim whose send failed for sure (the server refused it): retried later."""
        with self.members.transaction() as db:
            db.execute(
                "DELETE FROM digest_sent WHERE user_id = ? AND window = ?", (member_id, window)
            )

    def send_state(self, member_id: int, window: str) -> str | None:
        """'sent', 'sending' (a run stopped during the send: delivery unknown) or None."""
        rows = self.members.query(
            "SELECT state FROM digest_sent WHERE user_id = ? AND window = ?", (member_id, window)
        )
        return str(rows[0][0]) if rows else None
