"""Check a Paper where it enters (snapshot, OAI-PMH, arXiv API, enrichment), before storing.

Every parser builds its Paper through ``checked``: text that SQLite or UTF-8 cannot hold
(a lone surrogate from a JSON ``\\ud800`` escape) is repaired with U+FFFD and text over its
length bound is cut (ending in "…"), so the paper is kept and no page grows with one
record; a number out of its bound (version, dates, counts) fails the one record with a
``RecordError`` naming the paper, the field and the reason, which the caller reports and
skips while the rest of its batch or page goes on.
"""

from __future__ import annotations

import re
from datetime import date

from papersift.core.paper import MAX_VERSION, Author, Paper

# Bounds far above any real arXiv record (longest in the 2.7M-paper snapshot sample: title
# 286 characters, abstract 5,087, comments 884; the largest author lists ~5,200 names).
MAX_TEXT = {
    "title": 1_000, "abstract": 20_000, "comments": 5_000, "journal_ref": 2_000,
    "doi": 300, "license": 300,
}  # fmt: skip
MAX_AUTHORS = 10_000
MAX_AUTHOR_NAME = 500
MAX_CATEGORIES = 50
MAX_EXTRA = 200
MAX_EXTRA_VALUE = 2_000_000  # affiliations of a 5,000-author paper are one JSON value
MAX_CITATIONS = 10**9
FIRST_YEAR = 1986  # arXiv opened in 1991; a few records carry earlier dates

_SURROGATE = re.compile("[\ud800-\udfff]")


class RecordError(ValueError):
    """One record cannot be stored: ``str()`` is ``"<id>: <field>: <reason>"``."""

    def __init__(self, arxiv_id: str, field: str, reason: str) -> None:
        super().__init__(f"{arxiv_id}: {field}: {reason}")
        self.arxiv_id = arxiv_id
        self.field = field
        self.reason = reason


def repair_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start ending in "…"."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _text(text: str, field: str) -> str:
    return repair_text(cut(text, MAX_TEXT[field]))


def _opt(text: str | None, field: str) -> str | None:
    return None if text is None else _text(text, field)


def checked(paper: Paper) -> Paper:
    """``paper`` with its text repaired; raises RecordError if a field is out of bounds."""
    pid = repair_text(paper.arxiv_id)

    def fail(field: str, reason: str) -> RecordError:
        return RecordError(pid, field, reason)

    if not 1 <= paper.version <= MAX_VERSION:
        shown = str(paper.version) if abs(paper.version) < 10**12 else "a number that large"
        raise fail("version", f"v{shown} is outside 1..{MAX_VERSION}")
    today = date.today()
    for name, day in (("published", paper.published), ("updated", paper.updated)):
        if not FIRST_YEAR <= day.year <= today.year + 1:
            raise fail(name, f"{day.isoformat()} is outside {FIRST_YEAR}..{today.year + 1}")
    if len(paper.authors) > MAX_AUTHORS:
        raise fail("authors", f"{len(paper.authors):,} authors, more than {MAX_AUTHORS:,}")
    if len(paper.categories) > MAX_CATEGORIES:
        raise fail("categories", f"{len(paper.categories)} categories")
    if len(paper.extra) > MAX_EXTRA or any(len(v) > MAX_EXTRA_VALUE for _, v in paper.extra):
        raise fail("extra", "too many or too long enrichment values")
    if paper.citation_count is not None and not 0 <= paper.citation_count <= MAX_CITATIONS:
        raise fail("citation_count", "out of range")
    authors = tuple(_author(a) for a in paper.authors)
    fixed = Paper(
        pid, paper.version, _text(paper.title, "title"), _text(paper.abstract, "abstract"),
        authors, tuple(repair_text(c) for c in paper.categories), paper.published,
        paper.updated, _opt(paper.doi, "doi"), _opt(paper.journal_ref, "journal_ref"),
        _opt(paper.comments, "comments"), _opt(paper.license, "license"),
        paper.citation_count, tuple((repair_text(k), repair_text(v)) for k, v in paper.extra),
    )  # fmt: skip
    return paper if fixed == paper else fixed


def _author(a: Author) -> Author:
    name = repair_text(cut(a.name, MAX_AUTHOR_NAME))
    key = repair_text(cut(a.key, MAX_AUTHOR_NAME))
    ids = tuple((repair_text(s), repair_text(v)) for s, v in a.ids)
    if name is a.name and key is a.key and ids == a.ids:
        return a
    return Author(name, key, ids)
