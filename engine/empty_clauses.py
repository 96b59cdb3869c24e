"""Why a query matched nothing, when one of its required clauses matches no paper by itself:
``au:nobodyxyz`` or ``ti:xyzzy`` had answered an empty page without a word, where a free word
no paper holds gets a note (``engine.spelling.unheld_notes``). Only an empty answer pays:
one count per required clause, each a single term, phrase or researcher's papers.
"""

from __future__ import annotations

from papersift.engine.author_query import author_clause
from papersift.engine.lexical import LexicalIndex
from papersift.engine.query import ParsedQuery
from papersift.engine.store import PaperStore

# What a clause no paper matches is said to miss, by field (``cat:`` has its own note in
# ``engine.plan``; ``cites:``/``citedby:`` say what they could not find themselves).
_WHERE = {
    "au": "no author in this index is named {value}",
    "ti": "no paper's title holds {value}",
    "abs": "no paper's abstract holds {value}",
    None: "no paper holds {value}, which the query requires",
}


def empty_clause_notes(lex: LexicalIndex, store: PaperStore, parsed: ParsedQuery) -> list[str]:
    """A note for each required clause of ``parsed`` (fielded or ``+``) that alone matches
    no paper, read as the search reads it (an ``au:`` value as a name phrase or a researcher's
    papers). Clauses joined by OR are left alone: one alternative matching nothing is no
    reason."""
    notes = []
    for group in parsed.groups():
        c = group[0]
        if len(group) > 1 or c.sign == "-" or c.field not in _WHERE:
            continue
        if c.field is None and c.sign != "+":  # a free word: ``unheld_notes`` says it
            continue
        text = author_clause(store, c.text) if c.field == "au" else c.tantivy_string()
        query, errors = lex.parse(text)
        if not errors and lex.count(query) == 0:
            value = f"“{c.text}”" if c.phrase else f"'{c.text}'"
            notes.append(_WHERE[c.field].format(value=value))
    return notes
