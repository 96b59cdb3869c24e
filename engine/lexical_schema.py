"""The keyword index's schema and analysers: its fields, how title, abstract and author
text is tokenised, the stop words, the facet fields, and how dates are stored.

Field names are the query-syntax prefixes users type (``ti:``, ``abs:``, ``au:``, ``cat:``),
so the query parser needs no field mapping. ``engine.lexical`` builds and searches the
index; ``engine.why`` and ``engine.highlight`` analyse text as it does.
"""

from __future__ import annotations

from datetime import date

import tantivy

# (field, tokenizer) of the analysed text fields. ``words`` is title and abstract as written
# (folded, not stemmed), which papers only hold, never score: which forms of a query word a
# paper holds (``engine.word_forms``).
TEXT_FIELDS = {"ti": "en_text", "abs": "en_text", "au": "name", "words": "en_word"}
DEFAULT_FIELDS = ["ti", "abs", "au"]
# Fields indexed without positions or frequencies (no phrase, no score), only which papers.
DOCS_ONLY = frozenset({"words"})


# Lucene's English stop words, the list of Tantivy's ``stopword("english")`` filter below.
STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
))  # fmt: skip

# Facet kinds and the fast field each counts (institutions by ROR id). Researchers are
# counted from the people tables (engine.people), which the index does not copy.
FACET_FIELDS = {"categories": "cat", "years": "year", "institutions": "inst"}
FACETS = tuple(FACET_FIELDS)


def facet_value(key: object) -> str:
    return str(int(key)) if isinstance(key, float | int) else str(key)


def date_int(d: date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


def int_date(value: float | None) -> date | None:
    if value is None:  # no documents
        return None
    n = int(value)
    return date(n // 10000, n // 100 % 100, n % 100)


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("docid", stored=False, indexed=True, fast=True)
    sb.add_text_field("key", stored=False, tokenizer_name="raw")  # the docid, for id lists
    for name, tokenizer in TEXT_FIELDS.items():
        option = "basic" if name in DOCS_ONLY else "position"
        sb.add_text_field(name, stored=False, tokenizer_name=tokenizer, index_option=option)
    sb.add_text_field("author_key", stored=False, tokenizer_name="raw")
    sb.add_text_field("cat", stored=False, tokenizer_name="raw", fast=True)
    sb.add_text_field("arch", stored=False, tokenizer_name="raw")
    sb.add_integer_field("published", stored=False, indexed=True, fast=True)  # yyyymmdd
    sb.add_integer_field("year", stored=False, indexed=True, fast=True)
    sb.add_integer_field("cited", stored=False, indexed=True, fast=True)
    # Researcher ids: no longer written or read (search reads the people tables); kept so
    # indexes built when it was written still open without a rebuild.
    sb.add_integer_field("rid", stored=False, indexed=True, fast=True)
    sb.add_text_field("inst", stored=False, tokenizer_name="raw", fast=True)  # ROR ids
    return sb.build()


def text_analyzer() -> tantivy.TextAnalyzer:
    """Tantivy's ``en_stem`` plus Lucene's English stop words (the list of Elasticsearch's
    ``english`` analyzer, which BEIR's BM25 baselines use). Without them a title query
    such as "estimates in a molecular" matched 653k of 663k papers and took 84 ms. Letters
    are folded to ASCII: "Schrodinger" finds "Schrödinger" and the other way round."""
    return _text_builder().filter(tantivy.Filter.stemmer("english")).build()


def word_analyzer() -> tantivy.TextAnalyzer:
    """``text_analyzer`` without the stemmer: words as written, folded."""
    return _text_builder().build()


def _text_builder() -> tantivy.TextAnalyzerBuilder:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stopword("english"))
    )


def name_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


# Each tokenizer name of ``TEXT_FIELDS`` and the analyser it stands for.
ANALYZERS = {"en_text": text_analyzer, "en_word": word_analyzer, "name": name_analyzer}
