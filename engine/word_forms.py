"""Which papers hold a query word in one of its own forms, not a word that only shares its stem.

Titles and abstracts are searched stemmed (Porter2, ``engine.lexical_schema``), which folds
derivations together with inflections: "transformer" is "transform", "motivic" is "motiv"
(as "motivated" is), "bosonization" is "boson". At 663k papers of every field a search for
"transformer" brought up papers on Fourier transforms, "motivic" 18,036 papers and
"bosonization" 7,027. Lucene's light English stemmers (plurals; KStem's inflections) stop
short of derivations, and Elasticsearch setups add an unstemmed "exact" subfield for the
same reason. Here a word's *forms* are its inflections (plural, -s, -ed, -ing, with the usual
spelling changes: "studies", "computing", "spinning") that Porter2 also stems alike. Where a
match must hold a word (a query of up to ``[search] match_all_up_to`` words, a short query's
rarest word: ``engine.match``; every word of a sorted list that needs them all:
``engine.rarer_words``), it must hold one of its forms, in the ``words`` field (title and
abstract as written, folded, not stemmed) or as an author's name. The clause still scores by
the stem, so a paper that holds the word scores as before. A word no paper holds in any form
(its stem's papers hold only derivations of it) keeps the stem's matches rather than none,
and the answer says so. Where a longer query needs only some of its words, a stem still
counts, as it does for SciFact's sentence-like claims (bench/RESULTS.md, session 36).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import tantivy

from papersift.engine.lexical import LexicalIndex

FIELD = "words"  # title and abstract, folded, not stemmed (``engine.lexical_schema``)
MIN_BASE = 3  # a base shorter than this is no word's base ("red" is not "r" + "ed")
# A base ending consonant-vowel-consonant doubles its last letter before -ing and -ed
# ("spin" -> "spinning"); w, x and y never double.
_DOUBLES = re.compile(r"[^aeiou][aeiou][b-df-hj-np-tvz]$")


def bases(word: str) -> set[str]:
    """What ``word`` may be an inflection of (itself included): "studies" -> "study",
    "computing" -> "comput"/"compute", "spinning" -> "spin"."""
    out = {word}
    if word.endswith("ies") and len(word) > MIN_BASE + 2:
        out.add(word[:-3] + "y")
    if word.endswith("es"):
        out |= {word[:-2], word[:-1]}
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        out.add(word[:-1])
    for suffix in ("ing", "ed"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= MIN_BASE:
            out |= {stem, stem + "e"}
            if stem[-1] == stem[-2]:
                out.add(stem[:-1])
            if suffix == "ed" and stem.endswith("i"):
                out.add(stem[:-1] + "y")
    return {b for b in out if len(b) >= MIN_BASE} | {word}  # a short word is its own base


def inflections(base: str) -> set[str]:
    """The inflected forms of ``base`` (itself included), as English spells them."""
    out = {base, base + "s", base + "es", base + "ing", base + "ed"}
    if base.endswith("e"):
        out |= {base[:-1] + "ing", base + "d"}
    if base.endswith("y"):
        out |= {base[:-1] + "ies", base[:-1] + "ied"}
    if _DOUBLES.search(base):
        out |= {base + base[-1] + "ing", base + base[-1] + "ed"}
    return out


def candidates(word: str) -> set[str]:
    """Every spelling that may be a form of ``word``: the inflections of its bases."""
    return {form for base in bases(word) for form in inflections(base)}


def held_forms(lex: LexicalIndex, word: str) -> dict[str, int]:
    """The forms of ``word`` some paper's title or abstract holds, with how many papers hold
    each: the candidates (``candidates``) that Porter2 stems as it does ``word``. Empty for a
    word of several tokens or a stop word."""
    tokens = lex.analyzer(FIELD).analyze(word)
    if len(tokens) != 1:
        return {}
    stemmer = lex.analyzer("ti")
    stem = stemmer.analyze(tokens[0])
    searcher = lex.index.searcher()
    held = {}
    for form in sorted(candidates(tokens[0])):
        if stemmer.analyze(form) == stem and (n := searcher.doc_freq(FIELD, form)):
            held[form] = n
    return held


def word_clause(
    lex: LexicalIndex, spellings: Sequence[str], scored: tantivy.Query
) -> tantivy.Query | None:
    """The free clause of a word (in each of its ``spellings``: ``engine.umlauts``) where a
    match must hold it: the papers holding one of its forms in title or abstract, or the
    word in an author's name, each scored by ``scored`` (the stemmed clause the query parser
    built). None when no paper holds a form of it or the name: the stem's matches stand."""
    forms = {form for word in spellings for form in held_forms(lex, word)}
    names = {token for word in spellings for token in held_names(lex, word)}
    if not forms and not names:
        return None
    terms = [tantivy.Query.term_query(lex.schema, FIELD, form) for form in sorted(forms)]
    terms += [tantivy.Query.term_query(lex.schema, "au", token) for token in sorted(names)]
    held = tantivy.Query.const_score_query(_either(terms), 0.0)
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, held), (tantivy.Occur.Should, scored)])


def held_names(lex: LexicalIndex, word: str) -> list[str]:
    """``word`` as an author's name (one token) when some paper's authors hold it; [] for
    a word of several tokens ("h_alpha": an initial "h" is no reason to hold it)."""
    tokens = lex.analyzer("au").analyze(word)
    if len(tokens) != 1 or not lex.index.searcher().doc_freq("au", tokens[0]):
        return []
    return tokens


def stem_only_note(lex: LexicalIndex, word: str) -> str | None:
    """The answer's note when no paper holds ``word`` in a form of its own, nor as a name,
    but some hold its stem, whose matches then stand (``word_clause``): they are about
    another word."""
    if held_forms(lex, word) or held_names(lex, word):
        return None
    if len(lex.analyzer(FIELD).analyze(word)) != 1:
        return None
    if not lex.postings([word]):
        return None  # no paper holds it at all: the spelling note says so
    return f"no paper holds '{word}' as written; its matches hold other words of the same stem"


def _either(queries: Iterable[tantivy.Query]) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])
