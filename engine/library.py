"""Members' libraries: named tags holding saved papers (by arXiv id) with a note each.

Every read and write takes the member's id, so one member can never reach another's tag:
a tag id that is not theirs is simply not found. A tag's private feed token goes with it, and
a new tag clears any token left for its id (a file from before version 4 reuses tag ids), so
an old feed address never answers for a new tag. The tables are in ``engine.members_schema``.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from papersift.engine.members import AccountError, Members, now_iso

MAX_TAG = 60
MAX_NOTE = 2000
MAX_TAGS = 200  # per member
MAX_SAVED = 10_000  # per tag
_TAG = re.compile(r"^[^\x00-\x1f\x7f/]{1,60}$")


class LibraryError(AccountError):
    """A bad tag name or note, a full library: one line to show."""


@dataclass(frozen=True, slots=True)
class Tag:
    id: int
    name: str
    count: int  # saved papers


@dataclass(frozen=True, slots=True)
class Saved:
    arxiv_id: str
    note: str
    added: str


def clean_tag(name: str) -> str:
    text = " ".join(name.split())
    if not _TAG.match(text):
        raise LibraryError(
            f"a tag name has 1 to {MAX_TAG} characters and no slash, got {name[:80]!r}"
        )
    return text


def check_note(note: str) -> str:
    if len(note) > MAX_NOTE:
        raise LibraryError(f"a note has at most {MAX_NOTE} characters")
    return note


def _ensure(db: sqlite3.Connection, member_id: int, clean: str) -> int:
    """The id of the member's tag named ``clean``, made if new (inside a transaction)."""
    row = db.execute(
        "SELECT id FROM tags WHERE user_id = ? AND name = ?", (member_id, clean)
    ).fetchone()
    if row is not None:
        return int(row[0])
    (n,) = db.execute("SELECT COUNT(*) FROM tags WHERE user_id = ?", (member_id,)).fetchone()
    if n >= MAX_TAGS:
        raise LibraryError(f"a library holds at most {MAX_TAGS} tags")
    cur = db.execute(
        "INSERT INTO tags (user_id, name, created) VALUES (?, ?, ?)", (member_id, clean, now_iso())
    )
    tag_id = int(cur.lastrowid or 0)
    # The id may be a deleted tag's (files from before version 4): no token of it carries over.
    db.execute("DELETE FROM feed_tokens WHERE kind = 'tag' AND ref = ?", (tag_id,))
    return tag_id


def _save(
    db: sqlite3.Connection, member_id: int, tag_id: int, arxiv_ids: list[str], note: str
) -> int:
    """Save papers to the member's tag inside a transaction; how many were new."""
    if (
        db.execute(
            "SELECT 1 FROM tags WHERE id = ? AND user_id = ?", (tag_id, member_id)
        ).fetchone()
        is None
    ):
        raise LookupError(tag_id)
    (n,) = db.execute("SELECT COUNT(*) FROM saved WHERE tag_id = ?", (tag_id,)).fetchone()
    added, stamp = 0, now_iso()
    for arxiv_id in dict.fromkeys(arxiv_ids):
        cur = db.execute(
            "INSERT OR IGNORE INTO saved (tag_id, arxiv_id, note, added) VALUES (?, ?, ?, ?)",
            (tag_id, arxiv_id, note.strip(), stamp),
        )
        if cur.rowcount:
            added += 1
            if n + added > MAX_SAVED:
                raise LibraryError(f"a tag holds at most {MAX_SAVED:,} papers")
        elif note.strip():
            db.execute(
                "UPDATE saved SET note = ? WHERE tag_id = ? AND arxiv_id = ?",
                (note.strip(), tag_id, arxiv_id),
            )
    return added


class Library:
    """Tags and saved papers of the members in ``members``."""

    def __init__(self, members: Members) -> None:
        self.members = members

    def tags(self, member_id: int) -> list[Tag]:
        rows = self.members.query(
            "SELECT t.id, t.name, COUNT(s.arxiv_id) FROM tags t "
            "LEFT JOIN saved s ON s.tag_id = t.id WHERE t.user_id = ? "
            "GROUP BY t.id ORDER BY t.name COLLATE NOCASE",
            (member_id,),
        )
        return [Tag(int(i), str(n), int(c)) for i, n, c in rows]  # type: ignore[call-overload]

    def tag(self, member_id: int, tag_id: int) -> Tag | None:
        """The member's tag with this id; None for another member's or none at all."""
        return next((t for t in self.tags(member_id) if t.id == tag_id), None)

    def ensure_tag(self, member_id: int, name: str) -> Tag:
        """The member's tag of this name, created if new."""
        clean = clean_tag(name)
        with self.members.transaction() as db:
            tag_id = _ensure(db, member_id, clean)
        found = self.tag(member_id, tag_id)
        assert found is not None
        return found

    def delete_tag(self, member_id: int, tag_id: int) -> bool:
        """Delete the member's tag, its saved papers and its private feed."""
        with self.members.transaction() as db:
            cur = db.execute("DELETE FROM tags WHERE id = ? AND user_id = ?", (tag_id, member_id))
            if cur.rowcount > 0:
                db.execute("DELETE FROM feed_tokens WHERE kind = 'tag' AND ref = ?", (tag_id,))
            return cur.rowcount > 0

    def save(self, member_id: int, tag_id: int, arxiv_ids: list[str], note: str = "") -> int:
        """Save papers to the member's tag (a paper already there gets the new note if one
        is given); returns how many were new. LookupError if the tag is not theirs."""
        check_note(note)
        with self.members.transaction() as db:
            return _save(db, member_id, tag_id, arxiv_ids, note)

    def save_to(
        self, member_id: int, tag_ids: list[int], new_tag: str, arxiv_ids: list[str], note: str
    ) -> int:
        """Save papers to each of the member's tags and to the tag named ``new_tag`` (made if
        new; "" for none), all or nothing: a refused note or a full tag leaves no new tag
        behind. Returns the last tag's id; LookupError if a tag is not theirs."""
        check_note(note)
        clean = clean_tag(new_tag) if new_tag else ""
        with self.members.transaction() as db:
            chosen = [*tag_ids, _ensure(db, member_id, clean)] if clean else list(tag_ids)
            if not chosen:
                raise LibraryError("choose a tag or name a new one")
            for tag_id in dict.fromkeys(chosen):
                _save(db, member_id, tag_id, arxiv_ids, note)
        return chosen[-1]

    def remove(self, member_id: int, tag_id: int, arxiv_id: str) -> bool:
        with self.members.transaction() as db:
            cur = db.execute(
                "DELETE FROM saved WHERE arxiv_id = ? AND tag_id IN "
                "(SELECT id FROM tags WHERE id = ? AND user_id = ?)",
                (arxiv_id, tag_id, member_id),
            )
            return cur.rowcount > 0

    def saved(self, member_id: int, tag_id: int) -> list[Saved]:
        """The tag's papers, newest saved first (empty for another member's tag)."""
        rows = self.members.query(
            "SELECT s.arxiv_id, s.note, s.added FROM saved s JOIN tags t ON t.id = s.tag_id "
            "WHERE t.id = ? AND t.user_id = ? ORDER BY s.added DESC, s.arxiv_id",
            (tag_id, member_id),
        )
        return [Saved(str(a), str(n), str(d)) for a, n, d in rows]

    def all_saved(self, member_id: int) -> list[str]:
        """Every paper in any of the member's tags (their whole library)."""
        rows = self.members.query(
            "SELECT DISTINCT s.arxiv_id FROM saved s JOIN tags t ON t.id = s.tag_id "
            "WHERE t.user_id = ? ORDER BY s.arxiv_id",
            (member_id,),
        )
        return [str(r[0]) for r in rows]

    def tags_of(self, member_id: int, arxiv_id: str) -> list[tuple[Tag, str]]:
        """The member's tags holding this paper, each with its note there."""
        rows = self.members.query(
            "SELECT t.id, s.note FROM saved s JOIN tags t ON t.id = s.tag_id "
            "WHERE t.user_id = ? AND s.arxiv_id = ?",
            (member_id, arxiv_id),
        )
        by_id = {t.id: t for t in self.tags(member_id)}
        return [(by_id[int(i)], str(n)) for i, n in rows if int(i) in by_id]  # type: ignore[call-overload]
