"""Facets and sort order of a result list held in memory: the fused list of semantic and
hybrid search, and the first results of any search, whose institutions are counted.

Categories, years and date sorts come from the facet table (``engine.facet_table``); until it
is built, Tantivy finds the list's papers (a docid term set) and counts or sorts them.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from functools import partial

import numpy as np
import numpy.typing as npt
import tantivy

from papersift.engine.facet_table import FacetTable
from papersift.engine.lexical import LexicalIndex
from papersift.engine.ranking import Ranking
from papersift.engine.results import FacetCount

Facets = dict[str, tuple[FacetCount, ...]]
# Results (by relevance) whose researchers and institutions are counted when there are more.
PEOPLE_WINDOW = 200
NO_FACETS: Facets = {"categories": (), "years": (), "researchers": (), "institutions": ()}
CATEGORIES_YEARS = ("categories", "years")  # the facets the facet table counts


def institution_facet(
    lex: LexicalIndex, docids: list[int], table: FacetTable | None
) -> tuple[FacetCount, ...]:
    """The institutions of these papers: none before any enrichment (finding the papers in
    Tantivy alone would cost 0.1 ms of every search at 663k papers), else from the facet
    table the search already brought up to date, or from Tantivy until it is built
    (``table`` None)."""
    if not lex.has_terms("institutions"):
        return ()
    if table is not None:
        return table.institutions(docids)
    return lex.facets(lex.docids_for(docids), kinds=("institutions",))["institutions"]


def over_list(
    fused: Ranking,
    sort: str,
    lex: LexicalIndex,
    table: FacetTable | None,
    pool: Executor,
    researchers: Callable[[list[int]], tuple[FacetCount, ...]],
) -> tuple[Facets, Ranking]:
    """Facets of a list of papers (researchers by ``researchers``), and the list in
    ``sort`` order; ``table`` is the current facet table, None until it is built."""
    ids = fused.ids
    in_list: tantivy.Query | None = None  # the papers as a Tantivy query, made once
    if table is None:
        in_list = lex.docids_for(ids.tolist())
        counted = pool.submit(lex.facets, in_list, 30, CATEGORIES_YEARS)
        categories_years = counted.result
    else:
        categories_years = partial(table.counts, ids)
    # Researchers and institutions: the first PEOPLE_WINDOW, as in keyword mode.
    window = ids[:PEOPLE_WINDOW].tolist()
    facets = {"institutions": institution_facet(lex, window, table)}
    facets["researchers"] = researchers(window)
    facets.update(categories_years())
    order: npt.NDArray[np.int64] | None = None
    if sort in ("newest", "oldest") and table is not None:
        order = table.date_order(ids, newest=sort == "newest")
    elif sort != "relevance":
        in_list = in_list if in_list is not None else lex.docids_for(ids.tolist())
        by_field, values = lex.top(in_list, len(ids), 0, sort)  # type: ignore[arg-type]
        # The positions of the sorted docids in the list, to carry their scores along.
        where = {d: i for i, d in enumerate(ids.tolist())}
        order = np.asarray([where[d] for d in by_field], np.int64)
        if sort in ("newest", "oldest"):
            # Papers of one day in the list's order, as the table sorts them: Tantivy breaks
            # the tie by its own document order, so the same request gave another page once
            # the table was built.
            day = np.asarray(values, np.int64)
            order = order[np.lexsort((order, -day if sort == "newest" else day))]
    if order is None:
        return facets, fused
    return facets, Ranking(ids[order], fused.scores[order])


def total_of(facets: Facets, count: Callable[[], int]) -> int:
    """The number of matches, from their year facet: every paper has exactly one year and
    that facet lists every year, so its counts add up to it without another pass over the
    matches (``count``: that pass, should the facet be missing)."""
    years = facets.get("years")
    return sum(f.count for f in years) if years else count()
