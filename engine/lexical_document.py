"""A paper as the keyword index holds it: one Tantivy document of ``engine.lexical_schema``'s
fields. The text itself stays in the paper store; hits map back by the ``docid`` field."""

from __future__ import annotations

import tantivy

from papersift.core.accents import accented
from papersift.core.paper import Paper
from papersift.engine.institutions import affiliation_rors
from papersift.engine.lexical_schema import date_int


def paper_document(docid: int, p: Paper) -> tantivy.Document:
    """The document of paper ``p``, stored as ``docid``."""
    doc = tantivy.Document()
    doc.add_integer("docid", docid)
    doc.add_text("key", str(docid))
    title, abstract = accented(p.title), accented(p.abstract)  # Schr\"odinger as one word
    doc.add_text("ti", title)
    doc.add_text("abs", abstract)
    doc.add_text("words", title)  # as written: which forms a paper holds (engine.word_forms)
    doc.add_text("words", abstract)
    for a in p.authors:
        doc.add_text("au", a.name)
        doc.add_text("author_key", a.key)
    for c in p.categories:
        doc.add_text("cat", c)
    for arch in p.archives:
        doc.add_text("arch", arch)
    doc.add_integer("published", date_int(p.published))
    doc.add_integer("year", p.published.year)
    doc.add_integer("cited", p.citation_count or 0)
    for ror_id in affiliation_rors(p):
        doc.add_text("inst", ror_id)
    return doc
