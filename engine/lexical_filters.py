"""A request's filters (categories, researchers, institutions, dates) as one Tantivy query
over the keyword index; it restricts a search without changing scores
(``LexicalIndex.combine``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tantivy

from papersift.core.authors import normalise_name
from papersift.engine.lexical_schema import date_int
from papersift.engine.results import Filters

if TYPE_CHECKING:
    from papersift.engine.lexical import LexicalIndex


def keyword_filter(lex: LexicalIndex, f: Filters) -> tantivy.Query | None:
    """The filters as one query, or None when there are none."""
    schema = lex.schema
    clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
    if f.categories:
        ors = []
        cats = [c for c in f.categories if "." in c]
        archs = [c for c in f.categories if "." not in c]
        if cats:
            ors.append(tantivy.Query.term_set_query(schema, "cat", cats))
        if archs:
            ors.append(tantivy.Query.term_set_query(schema, "arch", archs))
        q = (
            ors[0]
            if len(ors) == 1
            else tantivy.Query.boolean_query([(tantivy.Occur.Should, o) for o in ors])
        )
        clauses.append((tantivy.Occur.Must, q))
    for name in f.researchers:
        key = normalise_name(name)
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, "author_key", key)))
    if f.researcher_ids:
        if lex.researcher_docids is None:
            raise RuntimeError("the researcher filter needs the people tables")
        joint = lex.researcher_docids(f.researcher_ids)
        clauses.append((tantivy.Occur.Must, lex.docids_for(joint)))
    for ror_id in f.institutions:
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, "inst", ror_id)))
    if f.date_from or f.date_to:
        published = tantivy.Query.range_query(
            schema,
            "published",
            tantivy.FieldType.Integer,
            date_int(f.date_from) if f.date_from else 0,
            date_int(f.date_to) if f.date_to else 99991231,
        )
        clauses.append((tantivy.Occur.Must, published))
    if not clauses:
        return None
    return tantivy.Query.boolean_query(clauses)
