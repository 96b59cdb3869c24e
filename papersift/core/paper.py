"""The one record type that flows from indexer to engine to server to feeds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

# New style: 0704.0001 (2007-2014, 4 digits) and 1501.00001 (5 digits); old style:
# archive[.subject]/YYMMNNN such as cmp-lg/9405001 or math.AG/0601001.
_NEW_ID = re.compile(r"^(?P<id>\d{4}\.\d{4,5})(?:v(?P<v>\d+))?$")
_OLD_ID = re.compile(r"^(?P<id>[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?$")

# arXiv's most revised papers have a few dozen versions; anything past this bound is an
# error upstream, and a version number sizes the links of a paper page, so it is bounded.
MAX_VERSION = 1000


def version_number(digits: str) -> int | None:
    """The version ``digits`` spell if it is in 1..MAX_VERSION; checked before ``int()``,
    which is slow (and refuses) on thousands of digits."""
    digits = digits.lstrip("0")
    if not digits.isdecimal() or not digits.isascii() or len(digits) > len(str(MAX_VERSION)):
        return None
    n = int(digits)
    return n if 1 <= n <= MAX_VERSION else None


_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/",
                 "doi:")  # fmt: skip
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)


def clean_doi(text: str | None) -> str | None:
    """``https://doi.org/10.7717/PeerJ.4375`` -> ``10.7717/peerj.4375`` (DOIs ignore case);
    None for what does not start as a DOI does."""
    if not text:
        return None
    t = text.strip().lower()
    for prefix in _DOI_PREFIXES:
        if t.startswith(prefix):
            t = t[len(prefix) :].strip()
    return t if t.startswith("10.") else None


def arxiv_doi_suffix(doi: str) -> str | None:
    """What follows ``10.48550/arXiv.`` in one of arXiv's own DOIs (its paper's id), else
    None."""
    m = _ARXIV_DOI.match(doi)
    return m.group(1) if m else None


def parse_arxiv_id(text: str) -> tuple[str, int | None] | None:
    """Split ``2401.10241v2`` into ``("2401.10241", 2)``; None if it is no arXiv id or its
    version is out of range (see ``version_out_of_range``)."""
    text = text.strip()
    for pattern in (_NEW_ID, _OLD_ID):
        m = pattern.match(text)
        if m:
            v = m.group("v")
            if v is None:
                return m.group("id"), None
            n = version_number(v)
            return None if n is None else (m.group("id"), n)
    return None


def version_out_of_range(text: str) -> bool:
    """True if ``text`` is an arXiv id but for a version outside 1..MAX_VERSION."""
    text = text.strip()
    return any(
        (m := pattern.match(text)) is not None and m.group("v") is not None
        and version_number(m.group("v")) is None
        for pattern in (_NEW_ID, _OLD_ID)
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Author:
    """One author of a paper: the display form and a normalised key for matching."""

    name: str
    key: str
    # External identifiers such as (("orcid", "0000-0002-..."), ("openalex", "A5023888391")).
    ids: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Paper:
    """A paper's latest known version, as stored and indexed."""

    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: tuple[Author, ...]
    categories: tuple[str, ...]  # primary first
    published: date  # v1
    updated: date  # latest version
    doi: str | None = None
    journal_ref: str | None = None
    comments: str | None = None
    license: str | None = None
    citation_count: int | None = None  # filled by enrichment
    extra: tuple[tuple[str, str], ...] = field(default=())  # other enrichment, key/value

    @property
    def primary_category(self) -> str:
        return self.categories[0] if self.categories else ""

    @property
    def archives(self) -> tuple[str, ...]:
        """Top-level archives of the categories: ``cs.CL`` -> ``cs``, ``hep-th`` -> ``hep-th``."""
        seen: dict[str, None] = {}
        for cat in self.categories:
            seen.setdefault(cat.split(".", 1)[0], None)
        return tuple(seen)

    @property
    def embed_text(self) -> str:
        """The text the embedding model sees: title and abstract."""
        return f"{self.title}. {self.abstract}"
