"""Examples for the site's guides (the home page, /developers, /llms.txt), drawn from the
index itself: its newest paper, largest category, the researcher with the most papers, an
institution enrichment linked papers to, and queries made of the words its recent titles
share. A guide that quoted the bundled demo's papers and words led to 404s and empty
results on any other data. Worked out once per index generation (``server.context``):
a few searches and lookups, each bounded, whatever the size of the index.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date
from itertools import pairwise

import tantivy
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from papersift.core.errors import PapersiftError
from papersift.core.paper import Paper
from papersift.core.tex import plain_text
from papersift.engine.institutions import Institution
from papersift.engine.results import SearchRequest
from papersift.engine.ror_match import normalise
from papersift.engine.search import SearchEngine

RECENT = 300  # the newest papers whose titles the example queries come from
CANDIDATES = 50  # word pairs looked at for the query examples ...
SEARCHES = 8  # ... and searched for (a keyword count each) before giving up
# Words many titles hold whatever their field, which make a dull example ("case study").
FILLER = frozenset((
    "analysis", "approach", "approaches", "based", "case", "framework", "improved", "method",
    "methods", "new", "novel", "paper", "results", "review", "studies", "study", "survey",
    "toward", "towards", "using", "via",
))  # fmt: skip
_QUESTION = re.compile(r"[A-Za-z][A-Za-z ,'-]*[A-Za-z?]")


@dataclass(frozen=True, slots=True)
class Examples:
    """What the guides show, each None when the index has none to show (empty, no
    researchers clustered yet, no institution linked to a paper)."""

    newest: Paper | None = None
    old_id: str | None = None  # an old-style id (``cmp-lg/9405001``) the index holds
    cited_id: str | None = None  # the most cited paper (references, citations)
    category: str | None = None  # the largest category
    terms: str | None = None  # a word pair recent titles share (plain search)
    phrase: str | None = None  # another, for a quoted phrase in keyword mode
    question: str | None = None  # a recent title's words (semantic search)
    filtered: tuple[str, int] | None = None  # a category and year a paper with ``terms`` has
    researcher: tuple[int, str] | None = None  # (id, a word of their name to search by)
    institution: tuple[Institution, str] | None = None  # and a word of its name

    @property
    def archive(self) -> str | None:
        """The largest category's archive (``cs`` of ``cs.IR``)."""
        return self.category.split(".")[0] if self.category else None

    @property
    def published(self) -> date | None:
        return self.newest.published if self.newest else None


def index_examples(engine: SearchEngine) -> Examples:
    """The examples of the index ``engine`` serves."""
    lex = engine.data.lexical
    if lex.num_docs == 0:
        return Examples()
    everything = tantivy.Query.all_query()
    recent_ids, _ = lex.top(everything, RECENT, 0, "newest")
    stored = engine.data.store.get(recent_ids)
    recent = [stored[d] for d in recent_ids if d in stored]
    if not recent:
        return Examples()
    oldest = _paper_ids(engine, lex.top(everything, 1, 0, "oldest")[0])
    cited = _paper_ids(engine, lex.top(everything, 1, 0, "cited")[0]) if lex.has_citations() else []
    counts = engine.category_counts()
    terms, phrase = _word_pairs(engine, recent)
    holder = next((p for p in recent if terms in _title_pairs(p)), None)
    return Examples(
        newest=recent[0],
        old_id=next((i for i in oldest if "/" in i), None),
        cited_id=cited[0] if cited else None,
        category=min(counts, key=lambda c: (-counts[c], c)) if counts else None,
        terms=terms,
        phrase=phrase,
        question=next((q for p in recent if (q := _question(p))), None),
        filtered=(holder.primary_category, holder.published.year)
        if holder and holder.primary_category
        else None,
        researcher=_researcher(engine),
        institution=_institution(engine),
    )


def _paper_ids(engine: SearchEngine, docids: list[int]) -> list[str]:
    papers = engine.data.store.get(docids)
    return [papers[d].arxiv_id for d in docids if d in papers]


def _runs(paper: Paper) -> list[list[str]]:
    """Runs of plain words (letters only, lower case) of the title, broken at punctuation,
    numbers and TeX: the words of a run stand next to each other in the title."""
    runs: list[list[str]] = [[]]
    for token in plain_text(paper.title).split():
        word = token.rstrip(",.;:?!").lower()
        if word.isalpha():
            runs[-1].append(word)
        if not word.isalpha() or word != token.lower():
            runs.append([])
    return [r for r in runs if r]


def _title_pairs(paper: Paper) -> set[str]:
    """Pairs of adjacent title words, neither a stop word nor filler, both of 3 letters or
    more."""
    return {
        f"{a} {b}"
        for run in _runs(paper)
        for a, b in pairwise(run)
        if a != b
        and all(len(w) > 2 and w not in ENGLISH_STOP_WORDS and w not in FILLER for w in (a, b))
    }


def _pairs(papers: list[Paper]) -> list[str]:
    """The title word pairs of ``papers``, those of the most papers first (ties in
    alphabetical order)."""
    counts = Counter(pair for paper in papers for pair in _title_pairs(paper))
    return sorted(counts, key=lambda p: (-counts[p], p))


def _word_pairs(engine: SearchEngine, papers: list[Paper]) -> tuple[str | None, str | None]:
    """The most shared word pair that, quoted, matches papers in keyword mode, and the next
    such pair with neither of its words (at most ``SEARCHES`` searches)."""
    first: str | None = None
    searches = SEARCHES
    for pair in _pairs(papers)[:CANDIDATES]:
        if first and set(pair.split()) & set(first.split()):
            continue
        if searches == 0:
            break
        searches -= 1
        try:
            found = engine.search(SearchRequest(f'"{pair}"', mode="keyword", page_size=1))
        except PapersiftError:  # a word the parser takes for syntax: not an example
            continue
        if not found.total:
            continue
        if first is not None:
            return first, pair
        first = pair
    return first, None


def _question(paper: Paper) -> str | None:
    """The title as a reader might type it (after a ``Name:`` prefix; capitalised words in
    lower case, an acronym kept), if it is 4 to 10 plain words, 3 of them not stop words."""
    title = " ".join(plain_text(paper.title).split())
    head, _, rest = title.partition(": ")
    words = (rest if len(rest.split()) >= 4 else head).split()
    if not 4 <= len(words) <= 10 or not _QUESTION.fullmatch(" ".join(words)):
        return None
    if sum(len(w) > 1 and w.isupper() for w in words) > 1:  # "On MMS, APS and XOS"
        return None
    if sum(len(w) > 2 and w.lower() not in ENGLISH_STOP_WORDS for w in words) < 3:
        return None
    return " ".join(w.lower() if w[1:].islower() or len(w) == 1 else w for w in words)


def _researcher(engine: SearchEngine) -> tuple[int, str] | None:
    """The researcher with the most papers, and the last word of their name that finds
    them by name (the whole name if no single word does)."""
    top, _ = engine.people.search("", limit=1, count=False)
    if not top:
        return None
    person = top[0]
    for word in reversed(person.name.split()):
        word = word.strip(".,")
        if len(word) > 1 and word.isalpha():
            found, _ = engine.people.search(word, limit=1, count=False)
            if found and found[0].rid == person.rid:
                return person.rid, word
    return person.rid, person.name


def _institution(engine: SearchEngine) -> tuple[Institution, str] | None:
    """The institution of the registry linked to the most papers, and the longest word of
    its name (which the institution search finds it by)."""
    lex = engine.data.lexical
    if not lex.has_terms("institutions"):
        return None
    top = lex.facets(tantivy.Query.all_query(), 10, ("institutions",))["institutions"]
    for facet in top:
        inst = engine.institutions.by_ror(facet.value)
        if inst is not None and inst.status != "withdrawn":
            words = normalise(inst.name).split()
            return inst, max(words, key=len) if words else inst.name
    return None
