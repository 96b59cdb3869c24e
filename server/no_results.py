"""What an empty answer offers (the search page, the API's ``looser``, the CLI): the
searches a step looser than the query (without its filters, by meaning, with a word left
out), each run first so that only those that find papers are offered, with how many they
find. A suggestion that leads to another "No papers found" only costs the reader a click."""

from __future__ import annotations

from dataclasses import replace

from papersift.core.errors import QueryError
from papersift.engine.match import ONLY_COMMON_WORDS
from papersift.engine.query import query_units
from papersift.engine.results import Filters, SearchRequest, SearchResult
from papersift.engine.search import SearchEngine
from papersift.server.params import search_url
from papersift.server.views import Link

# Queries with one word left out that are tried, the last word first (each one search of a
# page of one hit: the page of an empty search costs at most this many more, plus two).
MAX_SHORTER = 3
_OPERATORS = frozenset({"AND", "OR", "NOT"})


def shorter_queries(query: str) -> list[str]:
    """``query`` with one of its words (or phrases) left out, the last one first, at most
    ``MAX_SHORTER``; none for a query of one word or one with AND, OR or NOT, where leaving
    a word out would leave an operator without its operand, and none of -excluded words
    alone."""
    units = query_units(query)
    if len(units) < 2 or _OPERATORS & set(units):
        return []
    out = []
    for i in reversed(range(len(units))):
        rest = units[:i] + units[i + 1 :]
        if not all(u.startswith("-") for u in rest):
            out.append(" ".join(rest))
    return list(dict.fromkeys(out))[:MAX_SHORTER]


def looser_searches(result: SearchResult) -> list[tuple[str, SearchRequest]]:
    """Each search a step looser than ``result``'s, with its label, in the order offered."""
    req = result.request
    out = []
    if not req.filters.empty:
        out.append(("Search again without any filter", replace(req, filters=Filters())))
    # Hybrid already holds every semantic match; a query of fielded clauses alone
    # (``cites:X``) gives the model nothing to read.
    if result.mode == "keyword" and any(":" not in word for word in req.query.split()):
        out.append(("Search by meaning (semantic mode)", replace(req, mode="semantic")))
    out += [(f"Search for “{q}” only", replace(req, query=q)) for q in shorter_queries(req.query)]
    return out


def looser_found(
    engine: SearchEngine, result: SearchResult
) -> list[tuple[str, SearchRequest, int]]:
    """The looser searches (``looser_searches``) that find papers: label, request and how
    many (each asked for one hit). Each is checked as typed: one that finds papers only by
    its did-you-mean would show another query's results ("dark halo" -> "mark half"); the
    answer's own did-you-mean offers that. Runs searches: call it on an engine thread, and
    only when nothing matched."""
    out = []
    for label, looser in looser_searches(result):
        try:
            found = engine.search(replace(looser, page=1, page_size=1, autocorrect=False))
        except QueryError:  # not a search that can be answered: not offered
            continue
        if found.total:
            out.append((label, looser, found.total))
    return out


def suggestions(engine: SearchEngine, result: SearchResult) -> list[Link]:
    """What the page offers when nothing matched: the looser searches that find papers,
    with how many, then browsing (``looser_found``)."""
    out = [Link(label, search_url(req), count=n) for label, req, n in looser_found(engine, result)]
    out.append(Link("Browse the latest papers", "/search"))
    out.append(Link("Browse by category", "/categories"))
    return out


def spelling_may_help(result: SearchResult) -> bool:
    """Whether "check the spelling" is worth saying: not for a query of common words alone,
    which no paper is indexed by however they are spelt."""
    return ONLY_COMMON_WORDS not in result.warnings
